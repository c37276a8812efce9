import Dispatch
import Foundation
import LatchkeyServer
import Synchronization
import Testing

@testable import LatchkeySQLite

/// Group commit in `SQLiteDatabase`: transactions that wait while the queue is busy share one
/// `COMMIT`, yet each stays all-or-nothing and is answered only after that commit.
@Suite("SQLite group commit")
struct SQLiteGroupCommitTests {
    /// A database with table `t(x UNIQUE)` holding `0`.
    static func database() async throws -> SQLiteDatabase {
        let database = try await SQLiteDatabase.open(path: nil)
        try await database.transaction { db in
            try db.execute("CREATE TABLE t (x INTEGER NOT NULL UNIQUE)")
            try db.execute("INSERT INTO t (x) VALUES (0)")
        }
        return database
    }

    /// Holds the database's queue until `release`, so submitted transactions pile up into one batch.
    final class QueueGate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let entered = Atomic(false)
        /// Whether the queue is held: transactions submitted from now on wait.
        var holding: Bool { entered.load(ordering: .acquiring) }
        func hold(_ database: SQLiteDatabase) -> Task<Void, any Error> {
            // The wait runs on the database's own queue, never on a cooperative thread.
            Task {
                try await database.run { _ in
                    self.entered.store(true, ordering: .releasing)
                    self.semaphore.wait()
                }
            }
        }
        func release() { semaphore.signal() }
    }

    /// Submits `bodies` while the queue is held, then releases it; returns each one's outcome.
    static func batch(
        _ database: SQLiteDatabase, _ bodies: [@Sendable (SQLiteConnectionState) throws -> Int]
    ) async throws -> [Result<Int, any Error>] {
        let gate = QueueGate()
        let held = gate.hold(database)
        // Conditions, not timings: the queue is held before anything is submitted (or a body could
        // run alone, before the batch forms), and each body is waiting before the next is
        // submitted (tasks started together reach the queue in any order).
        while !gate.holding { await Task.yield() }
        var tasks: [Task<Result<Int, any Error>, Never>] = []
        for (index, body) in bodies.enumerated() {
            tasks.append(
                Task {
                    do { return .success(try await database.transaction(body)) } catch { return .failure(error) }
                })
            while database.waitingCount <= index { await Task.yield() }
        }
        gate.release()
        try await held.value
        var outcomes: [Result<Int, any Error>] = []
        for task in tasks { outcomes.append(await task.value) }
        return outcomes
    }

    static func values(_ database: SQLiteDatabase) async throws -> [Int] {
        try await database.transaction { db in
            try db.query("SELECT x FROM t ORDER BY x").compactMap { $0.column("x")?.integer }
        }
    }

    @Test("waiting transactions share one commit; a failing one is rolled back alone")
    func failingMemberRollsBackAlone() async throws {
        let database = try await Self.database()
        let commitsBefore = database.commitCount
        let outcomes = try await Self.batch(
            database,
            (1...6).map { value in
                { db in
                    try db.execute("INSERT INTO t (x) VALUES (?)", [.integer(value * 10)])
                    // Every third one writes, then violates UNIQUE: its first insert must vanish too.
                    if value % 3 == 0 { try db.execute("INSERT INTO t (x) VALUES (0)") }
                    return value
                }
            })
        #expect(database.commitCount == commitsBefore + 1)
        #expect(outcomes.map { (try? $0.get()) ?? -1 } == [1, 2, -1, 4, 5, -1])
        #expect(try await Self.values(database) == [0, 10, 20, 40, 50])
        try await database.close()
    }

    @Test("later members of a batch see the writes of earlier ones, in submission order")
    func submissionOrder() async throws {
        let database = try await Self.database()
        let outcomes = try await Self.batch(
            database,
            (1...5).map { _ in
                { db in
                    let next = (try db.query("SELECT MAX(x) AS m FROM t").first?.column("m")?.integer ?? 0) + 1
                    try db.execute("INSERT INTO t (x) VALUES (?)", [.integer(next)])
                    return next
                }
            })
        #expect(outcomes.map { (try? $0.get()) ?? -1 } == [1, 2, 3, 4, 5])
        try await database.close()
    }

    @Test("when SQLite drops the whole transaction, the members before hear it and the rest still run")
    func lostTransaction() async throws {
        let database = try await Self.database()
        let outcomes = try await Self.batch(
            database,
            [
                { db in
                    try db.execute("INSERT INTO t (x) VALUES (1)")
                    return 1
                },
                { db in
                    // As SQLite does by itself after a full disk or an I/O error.
                    try db.execute("ROLLBACK")
                    throw SQLiteFailure(code: 13, message: "database or disk is full")
                },
                { db in
                    try db.execute("INSERT INTO t (x) VALUES (3)")
                    return 3
                },
            ])
        #expect(outcomes.map { (try? $0.get()) ?? -1 } == [-1, -1, 3])
        #expect(try await Self.values(database) == [0, 3])
        try await database.close()
    }

    @Test("a closed database fails waiting transactions instead of leaving them hanging")
    func closed() async throws {
        let database = try await Self.database()
        try await database.close()
        await #expect(throws: SQLiteFailure.self) { try await database.transaction { _ in 1 } }
    }
}

/// The statement cache only pays if SQLite never compiles a cached statement again.
@Suite("SQLite statement cache")
struct SQLiteStatementCacheTests {
    @Test("the hot operations never re-prepare their statements as bindings change")
    func noReprepare() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        try await store.migrate()
        let now = StoreContractTests.now
        for round in 0..<4 {
            for person in 0..<3 {
                var login = StoreContractTests.login(
                    subject: "subject-\(person)", userID: "user-\(person)", sessionID: "session-\(round)-\(person)",
                    mapped: ["name": .string("Name \(round)")])
                login.singleUse = SingleUseClaims(
                    jti: "jti-\(round)-\(person)", jtiExpiresAt: now.addingTimeInterval(60), serverNonce: nil)
                let (user, _) = try await store.signIn(login, now: now.addingTimeInterval(Double(round)))
                _ = try await store.activeUser(id: user.id, sessionID: "session-\(round)-\(person)")
                _ = try await store.isSessionActive(id: "session-\(round)-\(person)")
                _ = try await store.rotateRefreshToken(
                    hash: Data("session-\(round)-\(person)".utf8), newHash: Data("next-\(round)-\(person)".utf8),
                    now: now, newExpiresAt: now.addingTimeInterval(3600))
                _ = try await store.user(id: user.id)
                let expiry = now.addingTimeInterval(Double(round * 3 + person))
                try await store.storeNonce("nonce-\(round)-\(person)", expiresAt: expiry, now: now)
                _ = try await store.useOnce(kind: "k", value: "v-\(person)", expiresAt: expiry, now: expiry)
                _ = try await store.savePendingAuthorization(
                    StoreContractTests.pending("h-\(round)-\(person)", expiresAt: expiry), now: now, limit: 100)
            }
            // The pruner's statements too, each round deleting something different.
            let cutoff = now.addingTimeInterval(Double(round * 3))
            _ = try await store.revokeSession(id: "session-\(round)-0", now: cutoff)
            _ = try await store.prune(
                PruneCutoffs(
                    singleUseExpiredBefore: cutoff, noncesExpiredBefore: cutoff,
                    pendingAuthorizationsExpiredBefore: cutoff, authorizationCodesExpiredBefore: cutoff,
                    sessionsEndedBefore: cutoff.addingTimeInterval(1), auditEventsBefore: cutoff),
                limit: 2)
        }
        let all = try await store.database.run { $0.reprepareCounts }
        // Statements prepared before `migrate` changed the schema are re-prepared once per later
        // migration (each changes the schema again), then never.
        let migration = all.filter { $0.key.hasPrefix("INSERT INTO schema_migrations") || $0.key == "BEGIN IMMEDIATE" }
        #expect(migration.values.allSatisfy { $0 < SQLiteSchema.migrations.count })
        let counts = all.filter { migration[$0.key] == nil }
        #expect(counts.count > 5)
        #expect(counts.filter { $0.value > 0 } == [:])
        try await store.close()
    }
}
