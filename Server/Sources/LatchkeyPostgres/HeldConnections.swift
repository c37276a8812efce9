import LatchkeyServer
import NIOCore
import PostgresNIO
import Synchronization

/// Connections the store keeps leased from the pool between operations, lent to operations under
/// one lock.
///
/// Why not a lease from `PostgresClient` per operation: each lease and release goes through the
/// pool's state machine, and each release schedules an idle-timeout timer (a task and a Dispatch
/// timer) that the next lease cancels. With a repeat sign-in that bookkeeping was what left the
/// node dearer on PostgreSQL than on SQLite at the same load (docs/performance.md). Keeping the
/// pool's connections open instead (`minimumConnections`) crashes postgres-nio 1.33 when a lease
/// comes while they reconnect after a database restart (`NodeFaultTests`), so the pool keeps its
/// defaults and this holds ordinary leases: a holder task leases a connection and keeps it until
/// told to give it back.
///
/// The rules the pool had, kept:
/// - At most `limit` connections, leased only when an operation waits and none is idle. Waiting
///   operations are served first come, first served, by whichever connection frees first.
/// - A connection that closed (the database restarted, the operation's timeout closed it) is
///   given back to the pool, never lent again, and is replaced on demand.
/// - A connection idle for `idleRelease` goes back to the pool (`releaseIdle`), which closes it
///   after its own idle timeout: a quiet node holds no connections.
/// - A lease the pool leaves waiting while operations wait is asked for again
///   (`retryStaleLeases`).
/// - Every operation still leases through here, so a held idle connection never makes another
///   lease wait.
final class HeldConnections: Sendable {
    /// A connection held by a holder task, which gives it back to the pool once `release` resumes
    /// (with `true`: closed first, and waited for, so the pool never lends it again).
    struct Held: Sendable {
        let connection: PostgresConnection
        fileprivate let release: CheckedContinuation<Bool, Never>
        fileprivate var idleSince: NIODeadline
    }

    /// The pool could not lend a connection (its circuit breaker, its shutdown), or the store is
    /// closed: told apart from an operation's own errors.
    struct LeaseFailure: Error {
        let error: any Error
    }

    /// The store was closed.
    struct Closed: Error, CustomStringConvertible {
        var description: String { "the store is closed" }
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Held, any Error>
    }

    /// A holder's lease request to the pool, under way.
    private struct Lease {
        let started: NIODeadline
        /// Set once the holder task exists.
        var task: Task<Void, Never>?
    }

    private struct State {
        /// Most recently used last: the busiest connections stay warm, the others age out.
        var idle: [Held] = []
        var waiters: [Waiter] = []
        /// Holder tasks alive: leasing, lent, idle, or giving their connection back.
        var holders = 0
        /// Of them, those still waiting for the pool (a lease given up by `retryStaleLeases` is
        /// no longer listed, and still counted in `holders` until its task ends).
        var leasing: [UInt64: Lease] = [:]
        var lastLease: UInt64 = 0
        var lastWaiter: UInt64 = 0
        var closed = false
        /// Whether the pool runs (`poolRuns`); until then holder tasks wait here before leasing.
        var poolRunning = false
        /// Resumed with whether the store closed meanwhile.
        var awaitingRun: [CheckedContinuation<Bool, Never>] = []

        /// What a holder does now: give up (`true`, the store closed) or lease (`false`, the
        /// pool runs); `nil` until either.
        var giveUpOrLease: Bool? { closed ? true : poolRunning ? false : nil }

        /// Leases to start now: one per waiter not already covered by a lease under way, within
        /// the limit.
        mutating func toStart(limit: Int) -> [UInt64] {
            guard !closed else { return [] }
            let count = max(0, min(waiters.count - leasing.count, limit - holders))
            holders += count
            return (0..<count).map { _ in
                lastLease += 1
                leasing[lastLease] = Lease(started: .now())
                return lastLease
            }
        }

        /// The most recently used idle connection that is still open; closed ones are dropped
        /// into `dropped`.
        mutating func popIdle(dropping dropped: inout [Held]) -> Held? {
            while let held = idle.popLast() {
                if !held.connection.isClosed { return held }
                dropped.append(held)
            }
            return nil
        }
    }

    private let state = Mutex(State())
    private let client: PostgresClient
    private let limit: Int
    private let staleLease: TimeAmount

    /// The connections now: lent to operations (or still being leased), idle, and the operations
    /// waiting for one (`/metrics`).
    var usage: PoolUsage {
        state.withLock { state in
            PoolUsage(
                inUse: max(0, state.holders - state.idle.count), idle: state.idle.count, waiting: state.waiters.count,
                limit: limit)
        }
    }

    /// How long a connection stays held without use before it goes back to the pool.
    static let idleRelease: Duration = .seconds(20)

    /// - Parameters:
    ///   - limit: the most connections held (the pool's maximum).
    ///   - staleLease: how long a lease may wait for the pool, while operations wait, before it
    ///     is asked for again (`retryStaleLeases`); the store gives half its operation timeout,
    ///     so the operation that started the lease can still be served by the next one.
    init(client: PostgresClient, limit: Int, staleLease: Duration) {
        self.client = client
        self.limit = max(1, limit)
        self.staleLease = .nanoseconds(Int64(min(staleLease, .seconds(3600)) / .nanoseconds(1)))
    }

    /// Lets holder tasks lease: called by the store just before `PostgresClient.run()`.
    ///
    /// Why they wait: postgres-nio logs a warning for every lease asked before `run()`, and the
    /// first operation of a new store (the migration a server runs before it binds, a `db`
    /// command) would otherwise ask before the store's background task has started the pool
    /// (8 runs of 10 of `latchkey db migrate` printed it). All but always, a holder resumed here
    /// leases after `run()` has marked the pool running, in its first statement on this thread:
    /// the holder has a task switch to make first. Nothing orders the two threads, so a
    /// preempted runner can still let one warning through; it is only a log line.
    func poolRuns() {
        let waiting = state.withLock { state in
            state.poolRunning = true
            defer { state.awaitingRun = [] }
            return state.awaitingRun
        }
        for holder in waiting { holder.resume(returning: false) }
    }

    /// Returns once `poolRuns` has been called (`false`) or the store closed (`true`: lease
    /// nothing).
    private func untilPoolRuns() async -> Bool {
        if let now = state.withLock({ $0.giveUpOrLease }) { return now }
        return await withCheckedContinuation { (holder: CheckedContinuation<Bool, Never>) in
            let now = state.withLock { state -> Bool? in
                if state.giveUpOrLease == nil { state.awaitingRun.append(holder) }
                return state.giveUpOrLease
            }
            if let now { holder.resume(returning: now) }
        }
    }

    /// An open connection: an idle one at once, else the first to be given back or leased.
    ///
    /// Throws `LeaseFailure` when the pool refuses or the store is closed, and
    /// `CancellationError` when the caller is cancelled while waiting.
    func take() async throws -> Held {
        var dropped: [Held] = []
        let (found, id, closed) = state.withLock { state -> (Held?, UInt64, Bool) in
            if let held = state.popIdle(dropping: &dropped) { return (held, 0, false) }
            state.lastWaiter += 1
            return (nil, state.lastWaiter, state.closed)
        }
        for held in dropped { held.release.resume(returning: true) }
        if let found { return found }
        if closed { throw LeaseFailure(error: Closed()) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Held, any Error>) in
                var dropped: [Held] = []
                let (found, start, closed) = state.withLock { state -> (Held?, [UInt64], Bool) in
                    if state.closed { return (nil, [], true) }
                    // Given back since the first look.
                    if let held = state.popIdle(dropping: &dropped) { return (held, [], false) }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return (nil, state.toStart(limit: limit), false)
                }
                for held in dropped { held.release.resume(returning: true) }
                if let found {
                    continuation.resume(returning: found)
                } else if closed {
                    continuation.resume(throwing: LeaseFailure(error: Closed()))
                } else {
                    startHolders(start)
                    // Cancelled before the waiter was listed: the handler found nothing to end.
                    if Task.isCancelled { cancel(id) }
                }
            }
        } onCancel: {
            cancel(id)
        }
    }

    /// Takes back a connection `take` lent: to the first waiter, else idle, or closed and to the
    /// pool when it is not `reusable` (its operation was cancelled, or failed on the connection
    /// itself) or has closed.
    func giveBack(_ held: Held, reusable: Bool) {
        var held = held
        held.idleSince = .now()
        place(held, reusable: reusable)
    }

    /// A connection given back, or just `leased` by a holder: to the first waiter, else idle,
    /// or back to the pool.
    private func place(_ held: Held, reusable: Bool, leased lease: UInt64? = nil) {
        let keep = reusable && !held.connection.isClosed
        let (waiter, released) = state.withLock { state -> (Waiter?, Bool) in
            if let lease { state.leasing[lease] = nil }
            // Counted until its lease is back (`leaseEnded`).
            guard keep, !state.closed else { return (nil, true) }
            if !state.waiters.isEmpty { return (state.waiters.removeFirst(), false) }
            state.idle.append(held)
            return (nil, false)
        }
        if let waiter { waiter.continuation.resume(returning: held) }
        if released { held.release.resume(returning: !keep) }
    }

    /// Gives back to the pool every connection idle since before `now - idleRelease`, and every
    /// idle one that closed.
    func releaseIdle(now: NIODeadline = .now()) {
        let cutoff = now - .nanoseconds(Int64(Self.idleRelease / .nanoseconds(1)))
        let stale = state.withLock { state -> [Held] in
            var stale: [Held] = []
            state.idle.removeAll { held in
                guard held.idleSince <= cutoff || held.connection.isClosed else { return false }
                stale.append(held)
                return true
            }
            return stale
        }
        for held in stale { held.release.resume(returning: held.connection.isClosed) }
    }

    /// Asks the pool again for every lease that has waited longer than `staleLease` while
    /// operations wait: the old request is cancelled, and its holder's end starts a new one.
    ///
    /// Why: postgres-nio 1.33's pool can leave a queued lease unserved for as long as the
    /// connections it has stay leased. After failed connection attempts it opens a connection
    /// for a later request only if its leased connections cannot soon serve it, and held ones
    /// never come back by themselves; a new request gets the pool's full check.
    func retryStaleLeases(now: NIODeadline = .now()) {
        let stale = state.withLock { state -> [Task<Void, Never>] in
            guard !state.waiters.isEmpty else { return [] }
            let cutoff = now - staleLease
            var stale: [Task<Void, Never>] = []
            for (id, lease) in state.leasing where lease.started <= cutoff {
                guard let task = lease.task else { continue }
                state.leasing[id] = nil
                stale.append(task)
            }
            return stale
        }
        for task in stale { task.cancel() }
    }

    /// Gives every idle connection back, fails every waiter, and lends nothing from now on; a
    /// connection still lent goes back to the pool when its operation ends.
    func close() {
        let (idle, waiters, awaitingRun) = state.withLock { state in
            state.closed = true
            defer {
                state.idle = []
                state.waiters = []
                state.awaitingRun = []
            }
            return (state.idle, state.waiters, state.awaitingRun)
        }
        for holder in awaitingRun { holder.resume(returning: true) }
        for held in idle { held.release.resume(returning: false) }
        for waiter in waiters { waiter.continuation.resume(throwing: LeaseFailure(error: Closed())) }
    }

    /// What the tests look at.
    struct Counts: Equatable {
        /// Holder tasks alive: leasing, lent, idle, or giving their connection back.
        var holders: Int
        /// Idle connections, and of them those that closed.
        var idle: Int, idleClosed: Int
        /// Operations waiting for a connection.
        var waiting: Int
    }

    /// The current counts, for tests.
    var counts: Counts {
        state.withLock { state in
            Counts(
                holders: state.holders, idle: state.idle.count,
                idleClosed: state.idle.count { $0.connection.isClosed }, waiting: state.waiters.count)
        }
    }

    /// Leases asked of the pool so far, for tests.
    var leasesStarted: UInt64 {
        state.withLock { $0.lastLease }
    }

    /// Holder tasks waiting for `poolRuns`, for tests.
    var awaitingRun: Int {
        state.withLock { $0.awaitingRun.count }
    }

    /// The idle connections, for tests.
    var idleConnections: [PostgresConnection] {
        state.withLock { $0.idle.map(\.connection) }
    }

    /// Ends a waiter that was cancelled, unless it was served first.
    private func cancel(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(throwing: CancellationError())
    }

    /// Starts a holder task for each lease, each leasing one connection from the pool.
    private func startHolders(_ leases: [UInt64]) {
        for lease in leases {
            let task = Task {
                if await untilPoolRuns() {
                    self.leaseFailed(lease, Closed())
                    return
                }
                do {
                    try await client.withConnection { connection in
                        let close = await withCheckedContinuation { release in
                            let held = Held(connection: connection, release: release, idleSince: .now())
                            self.place(held, reusable: true, leased: lease)
                        }
                        guard close else { return }
                        // The pool does not look at a connection before lending it: one given
                        // back while still closing (its operation timed out) would go to the
                        // next lease. Waiting for the close also lets the pool count it gone
                        // (its own close callback runs first) before `leaseEnded` asks for
                        // another: a lease queued while the pool is full, when a connection
                        // closes, is never served (postgres-nio 1.33 opens a connection for a
                        // queued lease only when another lease arrives, not when one closes:
                        // vapor/postgres-nio#657).
                        _ = connection.close() as EventLoopFuture<Void>
                        try? await connection.closeFuture.get()
                    }
                } catch {
                    self.leaseFailed(lease, error)
                    return
                }
                self.leaseEnded()
            }
            state.withLock { state in state.leasing[lease]?.task = task }
        }
    }

    /// A holder gave its connection back to the pool: another lease may start for a waiter.
    private func leaseEnded() {
        let start = state.withLock { state in
            state.holders -= 1
            return state.toStart(limit: limit)
        }
        startHolders(start)
    }

    /// A holder's lease failed: the first waiter gets the pool's error (the others wait for a
    /// connection given back, or another lease, within their timeouts). A lease given up by
    /// `retryStaleLeases` fails nobody: another is started in its place.
    private func leaseFailed(_ lease: UInt64, _ error: any Error) {
        let (waiter, start) = state.withLock { state -> (Waiter?, [UInt64]) in
            let retried = state.leasing.removeValue(forKey: lease) == nil
            state.holders -= 1
            let waiter = retried || state.waiters.isEmpty ? nil : state.waiters.removeFirst()
            return (waiter, state.toStart(limit: limit))
        }
        waiter?.continuation.resume(throwing: LeaseFailure(error: error))
        startHolders(start)
    }
}
