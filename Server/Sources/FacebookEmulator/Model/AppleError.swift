import HTTPTypes
import LatchkeyAPI

/// An error of Apple's REST endpoints: `{"error": "...", "error_description"?}` with HTTP 400
/// (TN3107), never Facebook's envelope.
struct AppleError: Error, Sendable, Equatable {
    var status: HTTPResponse.Status = .badRequest
    let error: String
    var description: String?

    var body: JSONValue {
        var members: [String: JSONValue] = ["error": .string(error)]
        if let description { members["error_description"] = .string(description) }
        return .object(members)
    }

    static let invalidRequest = AppleError(error: "invalid_request")
    static let invalidClient = AppleError(error: "invalid_client")
    /// For a state Apple's side should never be in (no signing key), rather than a crash.
    static let serverError = AppleError(status: .internalServerError, error: "server_error")
    static let unsupportedGrantType = AppleError(error: "unsupported_grant_type")
    /// Apple's answer for a bad code, as widely reported: "The code has expired or has been revoked."
    static let invalidCode = AppleError(
        error: "invalid_grant", description: "The code has expired or has been revoked.")
    static let invalidRefreshToken = AppleError(
        error: "invalid_grant", description: "The token has expired or has been revoked.")

    /// An injected fault on an Apple path: its status, with the OAuth error word a client would
    /// see there (`apple_error`, else one that fits the status).
    static func injected(status: HTTPResponse.Status, error: String?) -> AppleError {
        if let error { return AppleError(status: status, error: error) }
        let word =
            switch status.code {
            case 503: "temporarily_unavailable"
            case 500...: "server_error"
            default: "invalid_request"
            }
        return AppleError(status: status, error: word)
    }
}
