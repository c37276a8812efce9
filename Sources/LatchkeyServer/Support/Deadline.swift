import Foundation

/// Thrown when `withDeadline` runs out.
struct DeadlineExceeded: Error, Sendable {}

/// Runs `work` and gives up after `seconds`, cancelling it.
///
/// AsyncHTTPClient's per-request timeout covers only the response head; a body that stalls after
/// it would hold a login for the client's read timeout. Racing the whole exchange (head and body)
/// against one deadline bounds it.
func withDeadline<T: Sendable>(
    seconds: TimeInterval, _ work: @escaping @Sendable () async throws -> T
) async throws
    -> T
{
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await work() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
            throw DeadlineExceeded()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw DeadlineExceeded() }
        return first
    }
}
