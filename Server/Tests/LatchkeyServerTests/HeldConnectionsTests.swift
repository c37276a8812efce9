import Foundation
import LatchkeyServer
import NIOCore
import PostgresNIO
import Testing

@testable import LatchkeyPostgres

/// The PostgreSQL store keeps its connections leased between operations (`HeldConnections`): the
/// pool's limit, its reuse and its recovery must hold as they did with a lease per operation.
@Suite("PostgreSQL store: connections held between operations")
struct HeldConnectionsTests {
    /// The backend serving one operation.
    static let backend = "SELECT pg_backend_pid()"

    /// An operation under way on one of `store`'s connections (its backend `pid`) until `open`
    /// is sent.
    static func holding(
        _ store: PostgresStore
    ) async -> (operation: Task<Int, any Error>, pid: Int?, open: AsyncStream<Void>.Continuation) {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let (held, announce) = AsyncStream<Int>.makeStream()
        let operation = Task {
            // A failed operation ends the announcement (with no pid) rather than leave it waiting.
            defer { announce.finish() }
            return try await store.withConnection("holding") { connection in
                let pid = try await connection.rows(.init(unsafeSQL: backend)).first?.decode(Int.self) ?? 0
                announce.yield(pid)
                for await _ in gate { break }
                return pid
            }
        }
        var announced = held.makeAsyncIterator()
        return (operation, await announced.next(), open)
    }

    /// Waits until every holder task has given its connection back to the pool (each does so in
    /// its own task, after the connection's close when it closes one).
    static func allGivenBack(_ store: PostgresStore) async throws {
        try await eventually("every holder gave its connection back") { store.connections.counts.holders == 0 }
    }

    @Test("many operations at once share at most the pool's connections; one after another, they reuse one")
    func bounded() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base, poolSize: 2) { (store: PostgresStore) async throws in
            // Each holds its connection across a short wait, so they overlap.
            let overlapping = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<40 {
                    group.addTask { try await store.integer("SELECT pg_backend_pid() FROM pg_sleep(0.005)") }
                }
                return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
            }
            #expect((1...2).contains(overlapping.count))
            #expect(store.connections.counts.holders <= 2)
            var sequential = Set<Int>()
            for _ in 0..<5 { sequential.insert(try await store.integer(Self.backend)) }
            #expect(sequential.count == 1 && sequential.isSubset(of: overlapping))
        }
    }

    /// An operation waiting for a connection from a pool that does not run yet, as a new
    /// store's first operation can (a server's migration before it binds, a `db` command)
    /// before the store's task has started the pool; with what the pool's driver logs.
    static func waitingForThePool(
        _ base: PostgresURL
    ) async throws -> (
        client: PostgresClient, held: HeldConnections, waiting: Task<HeldConnections.Held, any Error>, log: LogCapture
    ) {
        let log = LogCapture()
        let client = PostgresClient(
            configuration: .init(
                host: base.host, port: base.port, username: base.user, password: base.password,
                database: base.database, tls: .disable),
            backgroundLogger: log.logger(label: "test"))
        let held = HeldConnections(client: client, limit: 1, staleLease: .seconds(60))
        let waiting = Task { try await held.take() }
        try await eventually("the lease waits for the pool") { held.awaitingRun == 1 }
        return (client, held, waiting, log)
    }

    @Test(
        "no lease is asked of a pool that does not run yet, so its driver logs no warning; once it runs, one is",
        .timeLimit(.minutes(3)))
    func leasesWaitForThePool() async throws {
        guard let base = try TestPostgres.url() else { return }
        let (client, held, waiting, log) = try await Self.waitingForThePool(base)
        // postgres-nio logs a warning for a lease asked before `run()`.
        #expect(log.all.filter { !$0.hasPrefix("trace") && !$0.hasPrefix("debug") }.isEmpty)
        let running = Task {
            held.poolRuns()
            await client.run()
        }
        defer { running.cancel() }
        let connection = try await waiting.value
        #expect(try await connection.connection.rows("SELECT 1").first?.decode(Int.self) == 1)
        held.giveBack(connection, reusable: true)
        held.close()
        try await eventually("the lease went back") { held.counts.holders == 0 }
    }

    @Test("a lease waiting for a pool that does not run yet ends when the store closes", .timeLimit(.minutes(3)))
    func closedBeforeThePoolRuns() async throws {
        guard let base = try TestPostgres.url() else { return }
        let (_, held, waiting, _) = try await Self.waitingForThePool(base)
        held.close()
        await #expect(throws: HeldConnections.LeaseFailure.self) { _ = try await waiting.value }
        try await eventually("the holder ended") { held.counts.holders == 0 && held.awaitingRun == 0 }
        #expect(held.leasesStarted == 1)
    }

    @Test("a connection the database ended while it was held idle is never lent again")
    func endedWhileIdle() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base, poolSize: 1) { (store: PostgresStore) async throws in
            let admin = try PostgresStore(
                url: base, poolSize: 1, timeout: TestPostgres.timeout, logger: TestPostgres.quiet)
            let first = try await store.integer(Self.backend)
            let idle = try #require(store.connections.idleConnections.first)
            #expect(try await admin.integer("SELECT pg_terminate_backend(\(first))::int") == 1)
            // The driver learns of the end when the connection's loop reads it: wait for that.
            try await idle.closeFuture.get()
            // Still listed idle (and closed), or already given back by the store's once-a-second
            // maintenance, which also returns closed idle connections: either way not lendable.
            #expect(store.connections.idleConnections.allSatisfy { $0.isClosed })
            let second = try await store.integer(Self.backend)
            #expect(second != first)
            #expect(store.connections.counts == .init(holders: 1, idle: 1, idleClosed: 0, waiting: 0))
            await admin.close()
        }
    }

    @Test("an operation that ran out of time closes its connection; the next one gets a new connection")
    func timedOut() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base, poolSize: 1) { (store: PostgresStore) async throws in
            let first = try await store.integer(Self.backend)
            await #expect(throws: StoreUnavailable.self) {
                try await store.withConnection("stuck", timeout: .milliseconds(200)) { connection in
                    try await connection.run("SELECT pg_sleep(5)")
                }
            }
            let second = try await store.integer(Self.backend)
            #expect(second != first)
            #expect(store.connections.counts == .init(holders: 1, idle: 1, idleClosed: 0, waiting: 0))
        }
    }

    @Test("after a statement's error the connection serves the next operation; after the session's end, a new one does")
    func afterErrors() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base, poolSize: 1) { (store: PostgresStore) async throws in
            let first = try await store.integer(Self.backend)
            await #expect(throws: PostgresStoreError.self) { try await store.execute("SELECT 1 / 0") }
            #expect(try await store.integer(Self.backend) == first)
            // FATAL 57P01: the server ends the session; the driver may not have read the close
            // yet when the operation ends, so the connection must not be lent again.
            await #expect(throws: StoreUnavailable.self) {
                try await store.execute("SELECT pg_terminate_backend(pg_backend_pid())")
            }
            #expect(try await store.integer(Self.backend) != first)
        }
    }

    @Test("closing the store ends a waiting operation at once; the one under way ends and gives its connection back")
    func closeUnderWay() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base, poolSize: 1) { (store: PostgresStore) async throws in
            let (underWay, _, open) = await Self.holding(store)
            let waiting = Task { try await store.integer(Self.backend) }
            // Listed as a waiter before the store closes.
            try await eventually("the operation waits") { store.connections.counts.waiting == 1 }
            await store.close()
            await #expect(throws: StoreUnavailable.self) { try await waiting.value }
            open.yield()
            _ = await underWay.result
            try await Self.allGivenBack(store)
            #expect(store.connections.counts == .init(holders: 0, idle: 0, idleClosed: 0, waiting: 0))
        }
    }

    @Test("an operation that gave up waiting for a connection takes none with it; the next one is served")
    func waiterGivesUp() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base, poolSize: 1) { (store: PostgresStore) async throws in
            let (holder, pid, open) = await Self.holding(store)
            await #expect(throws: StoreUnavailable.self) {
                try await store.withConnection("waiting", timeout: .milliseconds(200)) { _ in }
            }
            #expect(store.connections.counts.waiting == 0)
            open.yield()
            #expect(try await holder.value == pid)
            #expect(try await store.integer(Self.backend) == pid)
        }
    }

    @Test("a lease the pool leaves waiting is asked for again after the timeout; the operation waiting is served")
    func staleLease() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base, poolSize: 1) { (store: PostgresStore) async throws in
            // The pool's one connection, leased around the held connections: theirs waits.
            store.connections.releaseIdle(now: .now() + .seconds(21))
            try await Self.allGivenBack(store)
            let (gate, open) = AsyncStream<Void>.makeStream()
            let (taken, announce) = AsyncStream<Void>.makeStream()
            let outside = Task {
                try await store.client.withConnection { _ in
                    announce.yield()
                    for await _ in gate { break }
                }
            }
            var announced = taken.makeAsyncIterator()
            await announced.next()
            let held = HeldConnections(client: store.client, limit: 2, staleLease: .seconds(60))
            held.poolRuns()
            let waiting = Task { try await held.take() }
            try await eventually("the operation waits") { held.counts.waiting == 1 }
            #expect(held.leasesStarted == 1)
            held.retryStaleLeases(now: .now() + .seconds(30))
            #expect(held.leasesStarted == 1)
            // Asked until the first lease's task is listed (it may not be yet), and no further:
            // the second is not stale.
            try await eventually("the lease is asked for again") {
                if held.leasesStarted >= 2 { return true }
                held.retryStaleLeases(now: .now() + .seconds(61))
                return false
            }
            #expect(held.leasesStarted == 2)
            #expect(held.counts.holders == 1)
            open.yield()
            _ = try await outside.value
            // Served by the new lease, not failed by the old one's cancellation.
            let connection = try await waiting.value
            #expect(held.counts == .init(holders: 1, idle: 0, idleClosed: 0, waiting: 0))
            held.giveBack(connection, reusable: true)
            held.close()
            try await eventually("the lease went back") { held.counts.holders == 0 }
        }
    }

    @Test("held connections go back to the pool after 20 s idle; a closed store holds none and lends none")
    func released() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base, poolSize: 2) { (store: PostgresStore) async throws in
            _ = try await store.integer(Self.backend)
            #expect(store.connections.counts == .init(holders: 1, idle: 1, idleClosed: 0, waiting: 0))
            store.connections.releaseIdle(now: .now() + .seconds(19))
            #expect(store.connections.counts.holders == 1)
            store.connections.releaseIdle(now: .now() + .seconds(21))
            try await Self.allGivenBack(store)
            #expect(store.connections.counts == .init(holders: 0, idle: 0, idleClosed: 0, waiting: 0))
            _ = try await store.integer(Self.backend)
            #expect(store.connections.counts.holders == 1)
            await store.close()
            try await Self.allGivenBack(store)
            #expect(store.connections.counts == .init(holders: 0, idle: 0, idleClosed: 0, waiting: 0))
            await #expect(throws: StoreUnavailable.self) { _ = try await store.integer(Self.backend) }
        }
    }
}
