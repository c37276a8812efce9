import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One outgoing HTTP exchange, head and body, bounded by one deadline and a body size: every call
/// to Facebook (Graph, JWKS) and the SDK transport of `latchkey login`.
///
/// Built on AsyncHTTPClient's `EventLoopFuture` API rather than its async one: there the deadline
/// is cancelled once the response head arrives, so a body stalling after it needed a second bound
/// (a task and a timer per call), and each request also went through a cancellation actor and an
/// async body stream. Here one timer on the connection's event loop covers the whole exchange and
/// the body is collected on the loop; that per-call machinery had grown to about 15 % of a classic
/// sign-in (docs/performance.md).
package struct BoundedExchange: Sendable {
    /// Largest answer accepted by default; Graph and Latchkey answers are a few kilobytes.
    package static let defaultMaximumBody = 1 << 20

    let client: HTTPClient
    /// Bound on the whole exchange, in seconds.
    let timeout: TimeInterval
    /// Largest body accepted.
    let maximumBody: Int

    /// An exchange over `client`, given `timeout` seconds and at most `maximumBody` bytes of answer.
    package init(client: HTTPClient, timeout: TimeInterval, maximumBody: Int = defaultMaximumBody) {
        self.client = client
        self.timeout = timeout
        self.maximumBody = maximumBody
    }

    /// Sends `request` and returns the status, headers and body, or throws on a transport failure,
    /// a body over `maximumBody` or the deadline. Cancelling the calling task cancels the request.
    package func send(
        _ request: HTTPClient.Request
    ) async throws -> (status: Int, headers: HTTPHeaders, body: ByteBuffer) {
        let task = client.execute(
            request: request, delegate: ResponseAccumulator(request: request, maxBodySize: maximumBody),
            deadline: .now() + .nanoseconds(Int64(timeout * 1_000_000_000)))
        let response = try await withTaskCancellationHandler {
            try await task.futureResult.get()
        } onCancel: {
            task.cancel()
        }
        return (Int(response.status.code), response.headers, response.body ?? ByteBuffer())
    }
}
