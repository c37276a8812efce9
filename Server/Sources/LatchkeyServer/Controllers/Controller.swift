import HTTPTypes
import Hummingbird

/// One concept's HTTP endpoints (sessions and tokens, users, Easy Login, discovery, health):
/// each reads and validates requests, calls its service with typed values, and encodes the
/// answer. No controller holds a rule: those live in the services and in `Verdicts`.
protocol Controller: Sendable {
    /// Adds the controller's routes to `router`.
    func register(on router: Router<LatchkeyRequestContext>)
}

extension RouterMethods {
    /// Registers `handler` for `method` and `path`.
    @discardableResult
    func route<Output: ResponseGenerator>(
        _ method: HTTPRequest.Method, _ path: String,
        _ handler: @escaping @Sendable (Request, Context) async throws -> Output
    ) -> Self {
        on(RouterPath(path), method: method, use: handler)
    }
}
