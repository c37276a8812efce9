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
/// The task starts on the caller's thread (`Task.immediate`) rather than queued, and the time
/// limit is kept by the shared `Watchdog` rather than a timer of its own.
enum Deadline {
    /// The one clock of every operation's deadline.
    static let watchdog = Watchdog(loop: PostgresStore.eventLoops.next(), tick: .milliseconds(20))

    static func run<T: Sendable>(
        within timeout: Duration, timedOut: @escaping @Sendable () -> any Error,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let race = Race<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // A caller cancelled before it got here has its answer already: the operation must
                // not start at all (a lease can succeed at once, and its statement commit).
                guard race.wait(continuation) else { return }
                let entry = watchdog.add(after: timeout) { race.finish(.failure(timedOut())) }
                // Started on this thread, not queued: it runs until its first wait right here.
                let work = Task.immediate {
                    do {
                        race.finish(.success(try await operation()))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                race.attach(work: work, entry: entry)
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }
}

/// Ends the operations whose time is up, checking every `tick` while any is under way.
///
/// Why not a NIO timer per operation: scheduling one from outside its event loop, and cancelling
/// it when the operation ends first (nearly always), each wake the loop. With the queued task, the
/// timeout cost a sign-in 31–50 µs in alternating pinned runs (docs/performance.md), and now
/// measures within the noise of none at all. Here an operation only adds and removes an entry
/// under a lock; one chain of timers runs on one loop while entries exist and stops when there
/// are none. An operation ends at most one tick after its timeout, on one event loop of the
/// shared group: a loop busy for longer delays expiries by as much (connections' loops are the
/// same group, so a stuck loop would stall those queries anyway).
final class Watchdog: Sendable {
    private struct Entry {
        let deadline: NIODeadline
        let expire: @Sendable () -> Void
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var lastID: UInt64 = 0
        var ticking = false
    }

    private let state = Mutex(State())
    private let loop: any EventLoop
    private let tick: TimeAmount

    init(loop: any EventLoop, tick: TimeAmount) {
        self.loop = loop
        self.tick = tick
    }

    /// Calls `expire` once `timeout` has passed, unless `remove` comes first.
    func add(after timeout: Duration, _ expire: @escaping @Sendable () -> Void) -> UInt64 {
        // A year at most: nanoseconds in an Int64 end after 292 years.
        let bounded = min(timeout, .seconds(365 * 86_400))
        let entry = Entry(deadline: .now() + .nanoseconds(Int64(bounded / .nanoseconds(1))), expire: expire)
        let (id, start) = state.withLock { state in
            state.lastID += 1
            state.entries[state.lastID] = entry
            defer { state.ticking = true }
            return (state.lastID, !state.ticking)
        }
        if start { loop.scheduleTask(in: tick) { self.check() } }
        return id
    }

    /// Forgets an entry (its operation ended); one that already expired is gone already.
    func remove(_ id: UInt64) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// On the loop: expires what is due, and checks again a tick later while anything remains.
    private func check() {
        let now = NIODeadline.now()
        let (due, more) = state.withLock { state in
            var due: [@Sendable () -> Void] = []
            for (id, entry) in state.entries where entry.deadline <= now {
                due.append(entry.expire)
                state.entries[id] = nil
            }
            state.ticking = !state.entries.isEmpty
            return (due, state.ticking)
        }
        for expire in due { expire() }
        if more { loop.scheduleTask(in: tick) { self.check() } }
    }
}

/// The first of the operation's end, its watchdog entry's expiry and the caller's cancellation:
/// it stops the other two, then resumes the caller once.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        /// Set when the race ended before the caller waited (cancelled before it began).
        var result: Result<T, any Error>?
        var ended = false
        var work: Task<Void, Never>?
        var entry: UInt64?
    }

    private let state = Mutex(State())

    /// Waits with `continuation`; `false` when the race already ended (it is resumed at once).
    func wait(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
        let early = state.withLock { state -> Result<T, any Error>? in
            guard state.ended else {
                state.continuation = continuation
                return nil
            }
            return state.result
        }
        guard let early else { return true }
        continuation.resume(with: early)
        return false
    }

    func attach(work: Task<Void, Never>, entry: UInt64) {
        let ended = state.withLock { state in
            state.work = work
            state.entry = entry
            return state.ended
        }
        if ended { stop(work: work, entry: entry) }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, work, entry) = state.withLock { state in
            guard !state.ended else {
                return (nil, nil, nil) as (CheckedContinuation<T, any Error>?, Task<Void, Never>?, UInt64?)
            }
            state.ended = true
            if state.continuation == nil { state.result = result }
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.entry)
        }
        // The operation is told before the caller goes on: a timed-out query's connection is
        // already closing when the caller answers 503.
        stop(work: work, entry: entry)
        continuation?.resume(with: result)
    }

    /// Cancelling a finished task, or removing an expired entry, does nothing.
    private func stop(work: Task<Void, Never>?, entry: UInt64?) {
        if let entry { Deadline.watchdog.remove(entry) }
        work?.cancel()
    }
}
