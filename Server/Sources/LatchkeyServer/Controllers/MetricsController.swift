import Foundation
import Hummingbird

/// `GET /metrics`: the server's metrics in Prometheus' text format (docs/operations.md). On the
/// admin listener when `LATCHKEY_ADMIN_LISTEN` is set, open to whoever reaches it; otherwise on
/// the public listener behind an admin key, since request counts and error rates are an
/// operator's business.
struct MetricsController: Controller {
    let metrics: ServerMetrics
    let store: any LatchkeyStore
    let clock: @Sendable () -> Date
    /// The admin key check, on the public listener; `nil` on the admin listener.
    let authentication: AdminAuthentication?

    func register(on router: Router<LatchkeyRequestContext>) {
        let group = authentication.map { router.group().add(middleware: $0) } ?? router.group()
        group.route(.get, "/metrics") { _, _ in
            // A database that does not answer leaves its gauges out; the rest is still worth having.
            let gauges = try? await store.gauges(now: clock())
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(
                status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: metrics.render(gauges))))
        }
    }
}
