import ServiceLifecycle

/// Runs `work` every `interval` until the service group shuts down (gracefully or by
/// cancellation): the loop of every background service (pruning, jobs, key refresh). It waits
/// before the first run, so a start stays quick; a run under way when shutdown begins finishes,
/// since each is one store operation or a few, and only the wait is cancelled.
func runPeriodically(every interval: Duration, _ work: @escaping @Sendable () async -> Void) async {
    do {
        try await cancelWhenGracefulShutdown {
            while true {
                try await Task.sleep(for: interval)
                await work()
            }
        }
    } catch {
        // Cancelled while waiting: shutting down.
    }
}
