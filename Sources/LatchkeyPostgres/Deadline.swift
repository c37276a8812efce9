import NIOCore
import Synchronization

/// Runs an operation in a task of its own and answers within a time limit whatever the operation
/// does: when the time is up the caller gets `timedOut()` at once and the operation is cancelled,
/// left to end in the background.
///
/// Why not a task group racing a timer: leaving a group waits for every child, so a child that
/// does not end promptly when cancelled holds the caller as long as it runs. With three servers
/// under load and PostgreSQL crashing (`NodeFaultTests`), a few sign-ins in a few hundred waited
/// 30 s and more that way, past the 2 s timeout, while all the others were answered 503 in time.
/// The cost is the same (one task and one timer an operation; docs/performance.md measured both
/// shapes at 460–490 µs per repeat Limited Login).
enum Deadline {
    static func run<T: Sendable>(
        within timeout: Duration, on loop: any EventLoop, timedOut: @escaping @Sendable () -> any Error,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let race = Race<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.wait(continuation)
                let work = Task {
                    do {
                        race.finish(.success(try await operation()))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                // A year at most: nanoseconds in an Int64 end after 292 years.
                let bounded = min(timeout, .seconds(365 * 86_400))
                let timer = loop.scheduleTask(in: .nanoseconds(Int64(bounded / .nanoseconds(1)))) {
                    race.finish(.failure(timedOut()))
                }
                race.attach(work: work, timer: timer)
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }
}

/// The first of the operation's end, the timer and the caller's cancellation: it resumes the
/// caller once, then stops the other two.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        /// Set when the race ended before the caller waited (cancelled before it began).
        var result: Result<T, any Error>?
        var ended = false
        var work: Task<Void, Never>?
        var timer: Scheduled<Void>?
    }

    private let state = Mutex(State())

    func wait(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            guard state.ended else {
                state.continuation = continuation
                return nil
            }
            return state.result
        }
        if let early { continuation.resume(with: early) }
    }

    func attach(work: Task<Void, Never>, timer: Scheduled<Void>) {
        let ended = state.withLock { state in
            state.work = work
            state.timer = timer
            return state.ended
        }
        if ended { stop(work: work, timer: timer) }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, work, timer) = state.withLock { state in
            guard !state.ended else {
                return (nil, nil, nil) as (CheckedContinuation<T, any Error>?, Task<Void, Never>?, Scheduled<Void>?)
            }
            state.ended = true
            if state.continuation == nil { state.result = result }
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.timer)
        }
        continuation?.resume(with: result)
        stop(work: work, timer: timer)
    }

    /// Cancelling a finished task or a fired timer does nothing.
    private func stop(work: Task<Void, Never>?, timer: Scheduled<Void>?) {
        timer?.cancel()
        work?.cancel()
    }
}
