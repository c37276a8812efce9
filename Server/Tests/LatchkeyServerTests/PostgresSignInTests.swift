import Foundation
import LatchkeyAPI
import LatchkeyServer
import PostgresNIO
import Testing

@testable import LatchkeyPostgres

/// The one-statement sign-in on PostgreSQL (`Prepared.SignInDirect`) and the stamp it trusts:
/// when it may skip reading the properties, and that anything else writing them sends the next
/// sign-in through the read again. The storage contract checks the results on every backend;
/// this checks which path produced them.
@Suite("PostgreSQL one-statement sign-in")
struct PostgresSignInTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let mapped: [String: JSONValue] = ["name": "Ada", "email": "ada@example.com"]

    static func login(_ session: String, mapped: [String: JSONValue] = mapped, jti: String? = nil) -> LoginRecord {
        var login = StoreContractTests.login(subject: "p1", userID: "u1", sessionID: session, mapped: mapped)
        login.singleUse = jti.map {
            SingleUseClaims(jti: $0, jtiExpiresAt: now.addingTimeInterval(60), serverNonce: nil)
        }
        return login
    }

    /// The stored stamp, hex, or "" when none.
    static func stamp(_ store: PostgresStore) async throws -> String {
        try await store.pairs("SELECT id, coalesce(encode(sign_in_stamp, 'hex'), '') FROM users WHERE id = 'u1'")
            .first?.1 ?? "missing"
    }

    static func hex(_ login: LoginRecord) -> String {
        StorageRules.signInPropertiesStamp(login).map { $0.map { String(format: "%02x", $0) }.joined() } ?? ""
    }

    /// Runs the one-statement sign-in alone: the user, or `nil` when it asked for the read.
    static func direct(_ store: PostgresStore, _ login: LoginRecord) async throws -> (user: StoredUser, created: Bool)?
    {
        try await store.withConnection("test direct sign-in") { connection in
            try await PostgresStore.signInDirect(
                login, stamp: StorageRules.signInPropertiesStamp(login), now: now, connection
            ).map { ($0.user, $0.created) }
        }
    }

    @Test(
        "first and unchanged returning sign-ins take one statement; the stamp is forgotten by any other property write")
    func stampedSignIn() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base) { store in
            let first = try #require(try await Self.direct(store, Self.login("s1")))
            #expect(first.created && first.user.properties == Self.mapped)
            #expect(try await store.user(id: "u1") == first.user)
            #expect(try await Self.stamp(store) == Self.hex(Self.login("s1")))

            let again = try #require(try await Self.direct(store, Self.login("s2", jti: "j1")))
            #expect(!again.created)
            #expect(try await store.user(id: "u1") == again.user)
            #expect(try await store.isSessionActive(id: "s2"))
            // Its jti is spent like any other sign-in's.
            await #expect(throws: SignInConflict.replayed) {
                try await Self.direct(store, Self.login("s3", jti: "j1"))
            }

            // A client's update: the database forgets the stamp, and the statement asks for the read,
            // writing nothing (its jti stays unspent, its session unopened).
            _ = try await store.updateProperties(userID: "u1", properties: ["name": "Mine"], now: Self.now)
            #expect(try await Self.stamp(store) == "")
            #expect(try await Self.direct(store, Self.login("s4", jti: "j2")) == nil)
            #expect(try await !store.isSessionActive(id: "s4"))
            let merged = try await store.signIn(Self.login("s4", jti: "j2"), now: Self.now)
            #expect(merged.user.properties == Self.mapped)
            #expect(try await Self.stamp(store) == Self.hex(Self.login("s4")))

            // A write by anyone else (an operator, a server of an older version): forgotten too.
            try await store.execute(#"UPDATE users SET properties = '{"name":"Operator"}' WHERE id = 'u1'"#)
            #expect(try await Self.stamp(store) == "")
            #expect(try await Self.direct(store, Self.login("s5")) == nil)
            _ = try await store.signIn(Self.login("s5"), now: Self.now)
            #expect(try await store.user(id: "u1")?.properties == Self.mapped)

            // Other mapped properties: read, merged, and their stamp stored.
            let other = Self.login("s6", mapped: ["name": "Ada L."])
            #expect(try await Self.direct(store, other) == nil)
            _ = try await store.signIn(other, now: Self.now)
            #expect(try await Self.stamp(store) == Self.hex(other))
            #expect(try await store.user(id: "u1")?.properties == ["name": "Ada L.", "email": "ada@example.com"])
            // Mapped properties already stored under another stamp: nothing to merge, so only the
            // stamp is written, and the next such sign-in takes one statement.
            let subset = Self.login("s7", mapped: ["email": "ada@example.com"])
            #expect(try await Self.direct(store, subset) == nil)
            _ = try await store.signIn(subset, now: Self.now)
            #expect(try await Self.stamp(store) == Self.hex(subset))
            #expect(try await store.user(id: "u1")?.properties == ["name": "Ada L.", "email": "ada@example.com"])
            #expect(try await Self.direct(store, Self.login("s8", mapped: ["email": "ada@example.com"])) != nil)

            // Not refreshing properties: no stamp to check, one statement whatever is stored.
            try await store.execute(#"UPDATE users SET properties = '{}' WHERE id = 'u1'"#)
            var unrefreshed = Self.login("s9")
            unrefreshed.refreshProperties = false
            #expect(try await Self.direct(store, unrefreshed)?.user.properties == [:])

            // A disabled user: refused by the statement itself, nothing spent.
            #expect(try await store.setUserDisabled(id: "u1", disabled: true, now: Self.now, by: .commandLine) != nil)
            await #expect(throws: SignInConflict.userDisabled) {
                try await Self.direct(store, Self.login("s10", jti: "j3"))
            }
            #expect(try await store.useOnce(kind: "jti", value: "j3", expiresAt: Self.now, now: Self.now))
        }
    }

    /// Runs `body` inside a transaction left open on a connection of its own, then commits once
    /// `waiter` (started meanwhile on another connection) waits for that transaction's locks,
    /// and returns what `waiter` ended with. Polls `pg_blocking_pids`: no timing.
    static func whileHolding<T: Sendable>(
        _ store: PostgresStore, _ body: @escaping @Sendable (PostgresConnection) async throws -> Void,
        waiter: @escaping @Sendable () async throws -> T
    ) async throws -> Result<T, any Error> {
        try await store.withConnection("test holder") { connection in
            try await connection.run("BEGIN")
            let pid = try #require(try await connection.rows("SELECT pg_backend_pid()").first?.decode(Int32.self))
            try await body(connection)
            let waiting = Task { () -> Result<T, any Error> in
                do { return .success(try await waiter()) } catch { return .failure(error) }
            }
            var blocked = 0
            for _ in 0..<10_000 where blocked == 0 {
                blocked = try await store.integer(
                    "SELECT count(*) FROM pg_stat_activity WHERE \(pid) = ANY(pg_blocking_pids(pid))")
                if blocked == 0 { await Task.yield() }
            }
            #expect(blocked == 1, "the waiter never waited for the held transaction")
            try await connection.run("COMMIT")
            return await waiting.value
        }
    }

    @Test("a disable committing while a sign-in waits for it: the sign-in is refused, nothing opened or spent")
    func disableWhileSigningIn() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base) { store in
            _ = try await store.signIn(Self.login("s1"), now: Self.now)
            let outcome = try await Self.whileHolding(
                store, { try await $0.run("UPDATE users SET disabled = true WHERE id = 'u1'") },
                waiter: { try await store.signIn(Self.login("s2", jti: "j1"), now: Self.now) })
            #expect(throws: SignInConflict.userDisabled) { try outcome.get() }
            #expect(try await !store.isSessionActive(id: "s2"))
            #expect(try await store.integer("SELECT count(*) FROM sessions WHERE id = 's2'") == 0)
            #expect(try await store.useOnce(kind: "jti", value: "j1", expiresAt: Self.now, now: Self.now))
        }
    }

    @Test("a sign-in committing while a disable waits for it: the disable revokes that session too")
    func signInWhileDisabling() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base) { store in
            _ = try await store.signIn(Self.login("s1"), now: Self.now)
            let outcome = try await Self.whileHolding(
                store,
                { connection in
                    let login = Self.login("s2")
                    let done = try await PostgresStore.signInDirect(
                        login, stamp: StorageRules.signInPropertiesStamp(login), now: Self.now, connection)
                    #expect(done != nil)
                },
                waiter: { try await store.setUserDisabled(id: "u1", disabled: true, now: Self.now, by: .commandLine) })
            #expect(try outcome.get() != nil)
            #expect(try await store.setUserDisabled(id: "u1", disabled: false, now: Self.now, by: .commandLine) != nil)
            // Re-enabled: neither the older session nor the one that raced the disable comes back.
            #expect(try await !store.isSessionActive(id: "s1"))
            #expect(try await !store.isSessionActive(id: "s2"))
        }
    }

    @Test("concurrent returning sign-ins and client updates: every sign-in lands, and the last merge is what stays")
    func concurrentUpdates() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base) { store in
            _ = try await store.signIn(Self.login("s0"), now: Self.now)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        if index.isMultiple(of: 3) {
                            _ = try await store.updateProperties(
                                userID: "u1", properties: ["email": .null, "n": .int(index)], now: Self.now)
                        } else {
                            _ = try await store.signIn(Self.login("c\(index)"), now: Self.now)
                        }
                    }
                }
                try await group.waitForAll()
            }
            for index in 0..<12 where !index.isMultiple(of: 3) {
                #expect(try await store.isSessionActive(id: "c\(index)"))
            }
            // Whatever the order, a last sign-in restores the mapped values and its stamp holds.
            _ = try await store.signIn(Self.login("last"), now: Self.now)
            let user = try #require(try await store.user(id: "u1"))
            #expect(user.properties["name"] == "Ada" && user.properties["email"] == "ada@example.com")
            #expect(try await Self.stamp(store) == Self.hex(Self.login("last")))
            #expect(try await store.integer("SELECT count(*) FROM users") == 1)
        }
    }
}
