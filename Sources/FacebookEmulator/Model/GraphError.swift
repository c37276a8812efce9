import HTTPTypes
import LatchkeyAPI

/// A Graph API error in Facebook's envelope (facebook-protocol.md §6.1):
/// `{"error": {"message", "type", "code", "error_subcode", "is_transient", "fbtrace_id"}}`.
public struct GraphError: Error, Sendable, Equatable {
    /// HTTP status; Facebook uses 400 for nearly every Graph error.
    public var status: HTTPResponse.Status
    /// Human message, copied from Facebook's wording where known.
    public var message: String
    /// `OAuthException`, `GraphMethodException`, …
    public var type: String
    /// Numeric Graph error code.
    public var code: Int
    /// `error_subcode`, often absent on Facebook too.
    public var subcode: Int?
    /// `is_transient`, set by injected faults.
    public var isTransient: Bool?

    /// Creates an error.
    public init(
        status: HTTPResponse.Status = .badRequest, message: String, type: String = "OAuthException", code: Int,
        subcode: Int? = nil, isTransient: Bool? = nil
    ) {
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.subcode = subcode
        self.isTransient = isTransient
    }

    /// The JSON envelope, with a fresh `fbtrace_id`.
    func envelope(traceID: String) -> JSONValue {
        var error: [String: JSONValue] = [
            "message": .string(message), "type": .string(type), "code": .int(code), "fbtrace_id": .string(traceID),
        ]
        if let subcode { error["error_subcode"] = .int(subcode) }
        if let isTransient { error["is_transient"] = .bool(isTransient) }
        return ["error": .object(error)]
    }
}

extension GraphError {
    /// 190 without subcode: a token string the emulator never issued.
    static let unparsableToken = GraphError(
        message: "Invalid OAuth access token - Cannot parse access token", code: 190)

    /// 100 for a missing or unusable `access_token` on endpoints that need an app token.
    static let appTokenRequired = GraphError(
        message:
            "(#100) You must provide an app access token, or a user access token that is an owner or developer of the app",
        code: 100)

    /// 100 from `debug_token` when the input token belongs to another app than the caller's.
    static let appMismatch = GraphError(
        message: "(#100) The App_id in the input_token did not match the Viewing App", code: 100)

    /// 2500: a call that needs a token made without one.
    static let activeTokenRequired = GraphError(
        message: "An active access token must be used to query information about the current user.", code: 2500)

    /// 100 for a missing required parameter.
    static func missingParameter(_ name: String) -> GraphError {
        GraphError(message: "(#100) The parameter \(name) is required", code: 100)
    }

    /// 100 for an object id the caller cannot see, with Facebook's wording.
    static func unsupportedGet(_ id: String) -> GraphError {
        GraphError(
            message:
                "Unsupported get request. Object with ID '\(id)' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api",
            type: "GraphMethodException", code: 100, subcode: 33)
    }

    /// The error for an unknown path or method.
    static func unknownPath(_ path: String) -> GraphError {
        GraphError(message: "Unknown path components: \(path)", code: 2500)
    }

    /// 190 for a token that has expired at `expiredAt`, checked at `now`.
    static func expired(expiredAt: String, now: String) -> GraphError {
        GraphError(
            message: "Error validating access token: Session has expired on \(expiredAt). The current time is \(now).",
            code: 190, subcode: 463)
    }
}
