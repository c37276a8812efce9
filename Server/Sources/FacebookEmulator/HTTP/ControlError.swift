import HTTPTypes
import LatchkeyAPI

/// An error of the control API (`/_emulator/…`): our own shape, a stable snake_case `code` and a
/// message, because these endpoints are not Facebook's.
struct ControlError: Error, Sendable {
    let status: HTTPResponse.Status
    let code: String
    let message: String

    init(_ status: HTTPResponse.Status = .badRequest, code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    var body: JSONValue { ["error": ["code": .string(code), "message": .string(message)]] }

    static func missing(_ field: String) -> ControlError {
        ControlError(code: "missing_field", "'\(field)' is required")
    }

    static func unknownApp(_ id: String) -> ControlError {
        ControlError(.notFound, code: "unknown_app", "no app with id '\(id)'")
    }

    static func unknownUser(_ reference: String) -> ControlError {
        ControlError(.notFound, code: "unknown_user", "no user '\(reference)' (give a key or an app-scoped id)")
    }
}
