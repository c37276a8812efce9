import Synchronization
import Testing

@testable import LatchkeyPostgres

/// `Deadline` and its shared `Watchdog`: the caller is answered when the time is up whatever the
/// operation does, the operation is cancelled, and an operation that ends first is answered as it
/// ended. (No timing is asserted: only that each call ends, and how.)
@Suite("Operation deadlines", .timeLimit(.minutes(1)))
struct DeadlineTests {
    struct TimedOut: Error {}

    @Test("an operation that never ends is answered timed out, and cancelled; others meanwhile end as they end")
    func timesOut() async throws {
        let cancelled = Mutex(false)
        await #expect(throws: TimedOut.self) {
            try await Deadline.run(within: .milliseconds(30), timedOut: { TimedOut() }) {
                // Waits until cancelled, and then some: the caller must not wait for it.
                await withTaskCancellationHandler {
                    try? await Task.sleep(for: .seconds(3600))
                } onCancel: {
                    cancelled.withLock { $0 = true }
                }
                try? await Task.sleep(for: .seconds(3600))
                return 0
            }
        }
        // The cancellation comes from the same expiry that answered the caller.
        #expect(cancelled.withLock { $0 })
        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<50 {
                group.addTask {
                    try await Deadline.run(within: .seconds(60), timedOut: { TimedOut() }) {
                        await Task.yield()
                        return index
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(values == (0..<50).reduce(0, +))
        await #expect(throws: TimedOut.self) {
            try await Deadline.run(within: .milliseconds(10), timedOut: { TimedOut() }) {
                try await Task.sleep(for: .seconds(3600))
            }
        }
    }

    @Test("an operation's own error and a caller's cancellation reach the caller")
    func errorsAndCancellation() async throws {
        struct Failed: Error {}
        await #expect(throws: Failed.self) {
            try await Deadline.run(within: .seconds(60), timedOut: { TimedOut() }) { () async throws -> Int in
                throw Failed()
            }
        }
        let caller = Task {
            try await Deadline.run(within: .seconds(3600), timedOut: { TimedOut() }) {
                try await Task.sleep(for: .seconds(3600))
            }
        }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
    }

    @Test("a caller cancelled before it asks gets CancellationError, and the operation never starts")
    func alreadyCancelled() async {
        let started = Mutex(false)
        let (gate, opener) = AsyncStream<Void>.makeStream()
        let caller = Task {
            for await _ in gate {}  // never opens: ends when the task is cancelled
            return try await Deadline.run(within: .seconds(3600), timedOut: { TimedOut() }) {
                started.withLock { $0 = true }
                return 1
            }
        }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(!started.withLock { $0 })
        opener.finish()  // kept until here: a stream whose continuation is gone would end the wait early
    }
}
