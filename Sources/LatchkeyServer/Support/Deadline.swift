import Foundation
import NIOCore

/// Runs `work` and gives up after `seconds`, cancelling it.
///
/// AsyncHTTPClient's per-request timeout covers only the response head; a body that stalls after
/// it would hold a login for the client's read timeout. One deadline over the whole exchange (head
/// and body) bounds it.
///
/// The deadline is a timer on one of `timers`' event loops that cancels the work's task: a task
/// group racing a `Task.sleep` did the same with two child tasks and a dispatch timer per
/// Facebook call, several percent of a classic sign-in (docs/performance.md).
func withDeadline<T: Sendable>(
    seconds: TimeInterval, timers: any EventLoopGroup, _ work: @escaping @Sendable () async throws -> T
) async throws -> T {
    let task = Task { try await work() }
    let timer = timers.any().scheduleTask(in: .nanoseconds(Int64(seconds * 1_000_000_000))) { task.cancel() }
    defer { timer.cancel() }
    return try await withTaskCancellationHandler {
        try await task.value
    } onCancel: {
        task.cancel()
    }
}
