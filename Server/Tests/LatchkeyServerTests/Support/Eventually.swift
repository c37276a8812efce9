import Testing

/// Polls `condition` until it holds, for at most `limit`: waiting for work other tasks or
/// processes do (a key refresh, a connection given back), never a timing assertion. Running out
/// of time, or being cancelled, records a failure and returns.
func eventually(
    _ what: String, within limit: Duration = .seconds(60), every interval: Duration = .milliseconds(5),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("never happened: \(what)")
            return
        }
        do {
            try await Task.sleep(for: interval)
        } catch {
            Issue.record("cancelled while waiting until \(what)")
            return
        }
    }
}
