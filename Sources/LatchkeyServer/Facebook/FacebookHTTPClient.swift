import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

extension HTTPClient {
    /// The one client for every Facebook call: keep-alive pool sized for concurrent logins. The
    /// default pool (8 connections per host) would cap a server at 4 classic logins in flight,
    /// each waiting a Facebook round trip; measured in docs/performance.md.
    public static func facebook(_ configuration: ServerConfiguration) -> HTTPClient {
        var settings = HTTPClient.Configuration()
        settings.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.facebookMaxConnections)
        settings.timeout = .init(connect: .seconds(Int64(max(1, configuration.facebookTimeout))))
        // Latchkey bootstraps no tracer; the default no-op one still cost a span and its request
        // attributes per Facebook call (3 % of a classic sign-in, docs/performance.md).
        settings.tracing.tracer = nil
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings)
    }
}

/// One Facebook exchange, head and body, bounded by one deadline.
///
/// Built on AsyncHTTPClient's `EventLoopFuture` API rather than its async one: there the deadline
/// is cancelled once the response head arrives, so a body stalling after it needed a second bound
/// (a task and a timer per call), and each request also went through a cancellation actor and an
/// async body stream. Here one timer on the connection's event loop covers the whole exchange and
/// the body is collected on the loop; that per-call machinery had grown to about 15 % of a classic
/// sign-in (docs/performance.md).
struct FacebookExchange: Sendable {
    /// Largest answer accepted; Graph answers are a few kilobytes.
    static let maximumBody = 1 << 20

    let client: HTTPClient
    /// Bound on the whole exchange, in seconds.
    let timeout: TimeInterval

    /// Sends `request` and returns the status, headers and body, or throws on a transport failure,
    /// a body over `maximumBody` or the deadline.
    func send(_ request: HTTPClient.Request) async throws -> (status: Int, headers: HTTPHeaders, body: ByteBuffer) {
        let task = client.execute(
            request: request, delegate: ResponseAccumulator(request: request, maxBodySize: Self.maximumBody),
            deadline: .now() + .nanoseconds(Int64(timeout * 1_000_000_000)))
        let response = try await withTaskCancellationHandler {
            try await task.futureResult.get()
        } onCancel: {
            task.cancel()
        }
        return (Int(response.status.code), response.headers, response.body ?? ByteBuffer())
    }
}
