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
    /// `is_transient`, set by injected faults and throttling.
    public var isTransient: Bool?
    /// The error word of the `WWW-Authenticate` challenge; `nil` derives it from the code (see
    /// `authenticateChallenge`).
    public var challenge: String?

    /// Creates an error.
    public init(
        status: HTTPResponse.Status = .badRequest, message: String, type: String = "OAuthException", code: Int,
        subcode: Int? = nil, isTransient: Bool? = nil, challenge: String? = nil
    ) {
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.subcode = subcode
        self.isTransient = isTransient
        self.challenge = challenge
    }

    /// The `WWW-Authenticate` value Graph sends beside an `OAuthException`:
    /// `OAuth "Facebook Platform" "<error>" "<message>"`, where the error is `invalid_token` for
    /// token errors (190, and 102's session keys), `invalid_code` for a refused authorization code,
    /// and `invalid_request` otherwise (captured with codes 4, 100, 200 and 2500). Quotes and
    /// backslashes in the message are escaped, as in captures (fb_graph's specs, grouparoo's
    /// recorded Graph answers, CaptainFact/captain-fact-api#54).
    var authenticateChallenge: String? {
        guard type == "OAuthException" else { return nil }
        let error = challenge ?? ([190, 102].contains(code) ? "invalid_token" : "invalid_request")
        // Printable ASCII only, and bounded: some messages echo a path the client chose.
        var escaped = ""
        for scalar in message.unicodeScalars.prefix(512) {
            guard scalar.isASCII, scalar.value >= 0x20, scalar.value < 0x7F else {
                escaped.append("?")
                continue
            }
            if scalar == "\"" || scalar == "\\" { escaped.append("\\") }
            escaped.unicodeScalars.append(scalar)
        }
        return "OAuth \"Facebook Platform\" \"\(error)\" \"\(escaped)\""
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

extension GraphError {
    /// Code 4, the app's platform rate limit: HTTP 403, transient, no subcode, as captured in
    /// facebook-android-sdk#582 and react-share#70.
    static let applicationLimit = GraphError(
        status: .forbidden, message: "(#4) Application request limit reached", code: 4, isTransient: true)

    /// Code 17, one person's limit: HTTP 400, transient, subcode 2446079, as captured answers show
    /// (singer-io/tap-facebook#192 and Marketing API fixtures).
    static let userLimit = GraphError(
        message: "(#17) User request limit reached", code: 17, subcode: 2_446_079, isTransient: true)
}
