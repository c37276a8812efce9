import HTTPTypes
import LatchkeyAPI

/// A failure or delay injected into one endpoint (or all, with `*`) through the control API.
public struct Fault: Sendable, Equatable {
    /// The endpoint template it applies to, as counted in `/_emulator/calls` (e.g. `/debug_token`), or `*`.
    public var endpoint: String
    /// Added delay before answering, in milliseconds.
    public var latencyMilliseconds: Int
    /// The error answered instead of the real response; `nil` only delays.
    public var error: GraphError?
    /// How many more requests it fires for; `nil` until cleared.
    public var remaining: Int?
    /// Headers set on the answer (a `nil` value removes the header), such as `X-App-Usage` or
    /// `X-Business-Use-Case-Usage` figures, or none where Facebook sends none.
    public var headers: [HeaderChange]
    /// `false` strips `error_subcode` (and `debug_token`'s `data.error.subcode`) from the answer,
    /// as some of Facebook's answers come without one.
    public var sendsSubcodes: Bool
    /// The OAuth error word answered on Apple's paths (`invalid_grant`, `server_error`, …) with
    /// `error`'s status, since Apple's errors are not in Facebook's envelope; `nil` picks one
    /// that fits the status.
    var appleError: String?

    /// One header a fault sets or removes.
    public struct HeaderChange: Sendable, Equatable {
        /// The header's name.
        public var name: HTTPField.Name
        /// Its value; `nil` removes it.
        public var value: String?

        /// Creates a change.
        public init(name: HTTPField.Name, value: String?) {
            self.name = name
            self.value = value
        }
    }

    /// Creates a fault.
    public init(
        endpoint: String, latencyMilliseconds: Int = 0, error: GraphError? = nil, remaining: Int? = nil,
        headers: [HeaderChange] = [], sendsSubcodes: Bool = true
    ) {
        self.endpoint = endpoint
        self.latencyMilliseconds = latencyMilliseconds
        self.error = error
        self.remaining = remaining
        self.headers = headers
        self.sendsSubcodes = sendsSubcodes
    }

    /// Whether the fault changes anything at all.
    var isEffective: Bool { error != nil || latencyMilliseconds > 0 || !headers.isEmpty || !sendsSubcodes }

    func applies(to endpointName: String) -> Bool {
        (endpoint == "*" || endpoint == endpointName) && remaining.map { $0 > 0 } != false
    }

    /// The errors Facebook answers when throttling or failing (§6.2), by a short name.
    public static func preset(_ name: String) -> GraphError? {
        switch name {
        case "server_error":
            GraphError(
                status: .internalServerError,
                message: "An unexpected error has occurred. Please retry your request later.",
                code: 2, isTransient: true)
        case "unknown_error":
            GraphError(
                status: .internalServerError, message: "An unknown error has occurred.", code: 1, isTransient: true)
        case "transient":
            GraphError(
                message: "An unexpected error has occurred. Please retry your request later.", code: 2,
                isTransient: true)
        case "rate_limit_app": .applicationLimit
        case "rate_limit_user": .userLimit
        case "rate_limit_custom":
            GraphError(
                status: .forbidden, message: "(#613) Calls to this api have exceeded the rate limit.", code: 613,
                isTransient: true)
        default:
            nil
        }
    }
}
