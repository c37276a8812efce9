import Hummingbird

/// Sets `AuditContext.current` for each request: this node and the request's client (the address
/// after `LATCHKEY_TRUSTED_PROXIES`, the user agent), for every audit event the request records.
struct AuditContextMiddleware: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let node: String
    let limits: AbuseLimits

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let limits = limits
        return try await AuditContext.$current.withValue(
            AuditContext(node: node) { limits.clientInfo(request, context) }
        ) {
            try await next(request, context)
        }
    }
}
