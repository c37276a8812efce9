import Foundation
import Hummingbird
import Logging

/// The outermost middleware of each listener: gives the request its id (`RequestLog`), sends it
/// back as `X-Request-Id`, and once the answer is known (errors included: `ErrorMiddleware` runs
/// inside) writes the access log line when `LATCHKEY_ACCESS_LOG` is on.
///
/// The route is the template the router matched (`/admin/v1/users/{id}`), never the path itself:
/// a path may carry an id or a code, and a query anything.
struct RequestObserver: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let limits: AbuseLimits
    let accessLog: Bool
    let logger: Logger
    /// Requests by route and status, and their latency (`latchkey_http_*`).
    let metrics: ServerMetrics

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let id = RequestLog.newID()
        let started = ContinuousClock.now
        return try await RequestLog.$requestID.withValue(id) {
            do {
                var response = try await next(request, context)
                response.headers[RequestLog.header] = id
                log(request, context, status: response.status.code, since: started)
                return response
            } catch {
                log(request, context, status: (error as? any HTTPResponseError)?.status.code ?? 500, since: started)
                throw error
            }
        }
    }

    private func log(_ request: Request, _ context: Context, status: Int, since started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        // Hummingbird names a request no route matched `NotFound`: a fixed label, whatever the path.
        let route = context.endpointPath ?? "NotFound"
        metrics.request(method: request.method.rawValue, route: route, status: status, duration: elapsed)
        guard accessLog else { return }
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        logger.info(
            "latchkey.http.request",
            metadata: [
                "latchkey.http.method": "\(request.method.rawValue)",
                "latchkey.http.route": "\(route)",
                "latchkey.http.status": .stringConvertible(status),
                "latchkey.http.duration_ms": .stringConvertible((milliseconds * 1000).rounded() / 1000),
                "latchkey.client.address": "\(limits.clientInfo(request, context).address ?? "unknown")",
            ])
    }
}
