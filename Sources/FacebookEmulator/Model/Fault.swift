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

    /// Creates a fault.
    public init(endpoint: String, latencyMilliseconds: Int = 0, error: GraphError? = nil, remaining: Int? = nil) {
        self.endpoint = endpoint
        self.latencyMilliseconds = latencyMilliseconds
        self.error = error
        self.remaining = remaining
    }

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
        case "rate_limit_app":
            GraphError(
                status: .forbidden, message: "(#4) Application request limit reached", code: 4, isTransient: true)
        case "rate_limit_user":
            GraphError(status: .forbidden, message: "(#17) User request limit reached", code: 17, isTransient: true)
        case "rate_limit_custom":
            GraphError(
                status: .forbidden, message: "(#613) Calls to this api have exceeded the rate limit.", code: 613,
                isTransient: true)
        default:
            nil
        }
    }
}
