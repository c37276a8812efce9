import ArgumentParser
import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeySQLite
import LatchkeyServer
import Synchronization
import Testing

@testable import LatchkeyCLI
@testable import LatchkeyPostgres

/// What only PostgreSQL has: migrations shared by several servers, a database that goes away and
/// comes back, and moving an SQLite installation into it. The storage contract and every HTTP
/// test run on PostgreSQL too (`StoreContractTests`, `scripts/test`'s second pass).
@Suite("PostgreSQL store")
struct PostgresStoreTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("with many servers, one prunes at a time: a prune while another holds the lock deletes nothing")
    func pruneOneAtATime() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base) { store in
            #expect(try await store.useOnce(kind: "jti", value: "old", expiresAt: Self.now, now: Self.now))
            let cutoffs = PruneCutoffs(now: Self.now.addingTimeInterval(60), configuration: ServerConfiguration())
            let whileHeld = try await store.transaction("another server pruning") { connection in
                try await connection.run(
                    "SELECT pg_advisory_xact_lock(\(PostgresStore.pruneLockClass), hashtext(current_schema()))")
                return try await store.prune(cutoffs, limit: 100)
            }
            #expect(whileHeld == PruneReport())
            #expect(try await store.integer("SELECT count(*) FROM single_use") == 1)
            #expect(try await store.prune(cutoffs, limit: 100).singleUse == 1)
        }
    }

    @Test("a statement that fails to prepare works again once the cause is gone (the connection is replaced)")
    func failedPreparationRecovers() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withSchema(base) { url in
            let store = try PostgresStore(
                url: url, poolSize: 1, timeout: TestPostgres.timeout, logger: TestPostgres.quiet)
            try await store.migrate()
            // The one connection prepares the statement while its table is away: it fails.
            try await store.execute("ALTER TABLE refresh_tokens RENAME TO refresh_tokens_away")
            await #expect(throws: PostgresStoreError.self) {
                _ = try await store.refreshTokenFamily(hash: Data("x".utf8))
            }
            try await store.execute("ALTER TABLE refresh_tokens_away RENAME TO refresh_tokens")
            // The driver would answer the remembered failure on that connection for ever.
            #expect(try await store.refreshTokenFamily(hash: Data("x".utf8)) == nil)
            await store.close()
        }
    }

    @Test("connections ask the database to give up on a vanished server within two minutes (TCP keep-alives)")
    func tcpKeepAlives() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withStore(base) { (store: PostgresStore) async throws in
            #expect(try await store.integer("SELECT current_setting('tcp_keepalives_idle')::int") == 60)
            #expect(try await store.integer("SELECT current_setting('tcp_keepalives_interval')::int") == 10)
            #expect(try await store.integer("SELECT current_setting('tcp_keepalives_count')::int") == 6)
            #expect(try await store.integer("SELECT current_setting('tcp_user_timeout')::int") == 120_000)
        }
    }

    @Test("servers migrating together: one applies the schema, the others find it done; a newer schema is refused")
    func migrations() async throws {
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withSchema(base) { url in
            let stores = try (0..<4).map { _ in
                try PostgresStore(url: url, poolSize: 1, timeout: TestPostgres.timeout, logger: TestPostgres.quiet)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in stores { group.addTask { try await store.migrate() } }
                try await group.waitForAll()
            }
            let store = stores[0]
            #expect(
                try await store.integer("SELECT count(*) FROM schema_migrations") == PostgresStore.knownSchemaVersion)
            try await store.execute("INSERT INTO schema_migrations (version) VALUES (999)")
            await #expect {
                try await store.migrate()
            } throws: { "\($0)".contains("schema version 999, newer than this binary knows") }
            for store in stores { await store.close() }
        }
    }

    @Test(
        "a database that goes down answers 503 unavailable with Retry-After within the timeout; back up, it serves again"
    )
    func restart() async throws {
        guard try TestPostgres.url() != nil else { return }
        let cluster = try await TestCluster.start()
        let store = try PostgresStore(
            url: cluster.url, poolSize: 2, timeout: .milliseconds(700), logger: TestPostgres.quiet)
        // The server's start (migrations, the first signing key) runs under the short timeout too:
        // on a loaded pass it can run out, so the start, never the outage, gets a bounded number
        // of tries (migrating and agreeing on the first key are safe to repeat).
        let started = StartFlag()
        // One key-encryption key for every try: a first key a failed try stored must open in the next.
        let kek = KeyEncryptionKey.generate().key
        for attempt in 1... {
            do {
                try await Self.restartStory(store: store, cluster: cluster, kek: kek, started: started)
                break
            } catch is StoreUnavailable where !started.value.withLock({ $0 }) && attempt < 10 {
                continue
            }
        }
        await store.close()
        await cluster.stop()
    }

    /// The outage itself, once the server has started on `store`.
    private static func restartStory(
        store: PostgresStore, cluster: TestCluster, kek: KeyEncryptionKey, started: StartFlag
    ) async throws {
        try await Stack.run(store: store, { $0.secrets.keyEncryptionKey = kek }) { (stack: Stack) async throws in
            started.value.withLock { $0 = true }
            // The short timeout (for the outage below) can also cut the first sign-in on a loaded
            // test pass (a new connection, statements prepared): a repeat sign-in is harmless, so
            // a bounded number of tries.
            let alice = try await stack.facebookToken("alice")
            var first = try await stack.signIn(["accessToken": .string(alice)])
            for _ in 0..<20 where first.status == .serviceUnavailable {
                first = try await stack.signIn(["accessToken": .string(alice)])
            }
            let body = try first.json()
            let access = try #require(body["session"]?["access_token"]?.stringValue)
            // The same for the first read (a full pass cut it once at 0.7 s).
            var me = try await stack.get("/v1/users/me", bearer: access)
            for _ in 0..<20 where me.status == .serviceUnavailable {
                me = try await stack.get("/v1/users/me", bearer: access)
            }
            #expect(me.status == .ok)

            try await cluster.down()
            let started = ContinuousClock.now
            let answer = try await stack.get("/v1/users/me", bearer: access)
            #expect(answer.status == .serviceUnavailable && answer.errorCode == "unavailable")
            #expect(answer.headers[.retryAfter] == "5")
            // Bounded by the timeout (0.7 s), with room for a loaded machine; never a hang.
            #expect(ContinuousClock.now - started < .seconds(10))
            let signIn = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("bob"))])
            #expect(signIn.status == .serviceUnavailable && signIn.errorCode == "unavailable")
            #expect(try await stack.get("/ready").status == .serviceUnavailable)
            let refresh = try #require(body["session"]?["refresh_token"]?.stringValue)
            let token = try await SessionTests.refresh(stack, refresh)
            #expect(token.status == .serviceUnavailable && token.headers[.retryAfter] == "5")
            #expect(try token.json()["error"] == "temporarily_unavailable")
            #expect(try token.json()["error_code"] == "unavailable")

            try await cluster.up()
            // The pool reconnects by itself; it may still be waiting out its back-off from the
            // failed attempts, so give it a bounded number of requests.
            var status = HTTPResponse.Status.serviceUnavailable
            for _ in 0..<60 where status != .ok {
                status = try await stack.get("/v1/users/me", bearer: access).status
            }
            #expect(status == .ok)
            #expect(
                try await stack.signIn(["accessToken": .string(try await stack.facebookToken("bob"))]).status == .ok)
        }
    }

    @Test("db copy moves an SQLite installation: every row, sessions still refresh, run twice adds nothing")
    func copy() async throws {
        guard let base = try TestPostgres.url() else { return }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-copy-\(UUID()).sqlite")
        defer { try? FileManager.default.removeItem(at: file) }
        let sqlite = try await SQLiteStore.open(.sqliteFile(file.path))
        try await sqlite.migrate()
        for index in 0..<7 {
            var login = StoreContractTests.login(
                subject: "s\(index)", userID: "u\(index)", sessionID: "session\(index)",
                mapped: ["name": .string("N\(index)")])
            login.singleUse = SingleUseClaims(
                jti: "jti\(index)", jtiExpiresAt: Self.now.addingTimeInterval(600), serverNonce: nil)
            _ = try await sqlite.signIn(login, now: Self.now)
        }
        _ = try await sqlite.rotateRefreshToken(
            hash: Data("session0".utf8), newHash: Data("next0".utf8), now: Self.now,
            newExpiresAt: Self.now.addingTimeInterval(3600))
        _ = try await sqlite.setUserDisabled(id: "u6", disabled: true, now: Self.now, by: .commandLine)
        try await sqlite.addSigningKey(
            StoredSigningKey(kid: "k1", privateKey: Data([1, 2, 3]), createdAt: Self.now, retiredAt: nil))
        try await sqlite.storeNonce("n1", expiresAt: Self.now.addingTimeInterval(60), now: Self.now)
        // An Apple identity with its sealed refresh token and what Apple said about it.
        try await sqlite.saveProviderToken(
            StoreContractTests.token("a7", client: "com.example.app", "sealed"), now: Self.now)
        _ = try await sqlite.signIn(
            StoreContractTests.appleLogin(subject: "a7", userID: "u7", sessionID: "session7"), now: Self.now)
        _ = try await sqlite.applyProviderEvent(
            StoreContractTests.event(.emailDisabled, "a7", id: "e7"), now: Self.now)

        try await TestPostgres.withStore(base) { postgres in
            let counts = try await DatabaseTransfer.copy(from: sqlite, to: postgres, batch: 3)
            #expect(counts.first { $0.table == "users" }?.rows == 8)
            #expect(counts.first { $0.table == "refresh_tokens" }?.rows == 9)
            // Eight sign-ins, the disable and Apple's email event.
            #expect(counts.first { $0.table == "audit_events" }?.rows == 10)
            #expect(counts.first { $0.table == "provider_tokens" }?.rows == 1)
            let apple = try await sqlite.identityState(provider: "apple", subject: "a7")
            let copied = try await postgres.identityState(provider: "apple", subject: "a7")
            #expect(apple != nil && apple == copied)
            #expect(apple?.emailForwardingDisabled == true)
            // Again, as after an interruption: nothing new, counts still verified.
            var added = 0
            _ = try await DatabaseTransfer.copy(from: sqlite, to: postgres, batch: 500) { added += $1 }
            #expect(added == 0)
            // The same users, field for field (dates to PostgreSQL's microsecond); the copied
            // session refreshes; the spent token still revokes; the spent jti stays spent; the
            // disabled user stays disabled.
            for index in 0..<7 {
                let a = try #require(try await sqlite.user(id: "u\(index)"))
                let b = try #require(try await postgres.user(id: "u\(index)"))
                #expect(a.properties == b.properties && a.disabled == b.disabled)
                #expect(a.identities.map(\.subject) == b.identities.map(\.subject))
                #expect(a.identities.map(\.grantedPermissions) == b.identities.map(\.grantedPermissions))
                for (x, y) in [(a.createdAt, b.createdAt), (a.updatedAt, b.updatedAt)] {
                    #expect(abs(x.timeIntervalSince(y)) < 0.000_002)
                }
            }
            let later = Self.now.addingTimeInterval(60)
            #expect(
                try await postgres.rotateRefreshToken(
                    hash: Data("next0".utf8), newHash: Data("next1".utf8), now: later,
                    newExpiresAt: later.addingTimeInterval(3600))
                    == .rotated(sessionID: "session0", userID: "u0", assurance: .init(method: .guest)))
            #expect(
                try await postgres.rotateRefreshToken(
                    hash: Data("session0".utf8), newHash: Data("y".utf8), now: later,
                    newExpiresAt: later.addingTimeInterval(3600)) == .reused(sessionID: "session0"))
            #expect(
                try await postgres.rotateRefreshToken(
                    hash: Data("session1".utf8), newHash: Data("x".utf8), now: later,
                    newExpiresAt: later.addingTimeInterval(3600))
                    == .rotated(sessionID: "session1", userID: "u1", assurance: .init(method: .guest)))
            #expect(try await !postgres.useOnce(kind: "jti", value: "jti3", expiresAt: later, now: later))
            #expect(try await postgres.activeUser(id: "u6", sessionID: "session6") == nil)
            #expect(try await postgres.signingKeys().map(\.kid) == ["k1"])
            // New audit events (the reuse above ended a session: `session.refresh_reused`; a sign-in)
            // get ids after the copied ones.
            _ = try await postgres.signIn(
                StoreContractTests.login(subject: "new", userID: "u-new", sessionID: "s-new"), now: later)
            #expect(try await postgres.integer("SELECT count(DISTINCT id) FROM audit_events") == 12)
            // A destination holding rows the source lacks fails the verification.
            await #expect {
                _ = try await DatabaseTransfer.copy(from: sqlite, to: postgres, batch: 500)
            } throws: { "\($0)".contains("users: the source has 8 rows, the destination 9") }
        }
        try await sqlite.close()
    }

    @Test("db migrate and db copy run from the command line; db backup points PostgreSQL to pg_dump")
    func commands() async throws {
        guard let base = try TestPostgres.url() else { return }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-cli-\(UUID()).sqlite")
        defer { try? FileManager.default.removeItem(at: file) }
        let sqlite = try await SQLiteStore.open(.sqliteFile(file.path))
        try await sqlite.migrate()
        _ = try await sqlite.signIn(StoreContractTests.login(subject: "s", userID: "u", sessionID: "a"), now: Self.now)
        try await sqlite.close()
        try await TestPostgres.withSchema(base) { url in
            let text = Self.text(url)
            var migrate = try #require(
                try DatabaseCommand.parseAsRoot([
                    "migrate", "--database-url", text, "--config", TestPostgres.commandSettings,
                ]) as? any AsyncParsableCommand)
            try await migrate.run()
            var copy = try #require(
                try DatabaseCommand.parseAsRoot(["copy", "--from", "sqlite:" + file.path, "--to", text])
                    as? any AsyncParsableCommand)
            try await copy.run()
            // As an operator keeps the password off the command line: the destination from the
            // settings, the URL from a file (rows already copied are kept, so a second copy is fine).
            let urlFile = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-url-\(UUID())")
            let config = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-env-\(UUID())")
            defer {
                try? FileManager.default.removeItem(at: urlFile)
                try? FileManager.default.removeItem(at: config)
            }
            try text.write(to: urlFile, atomically: true, encoding: .utf8)
            try "LATCHKEY_DATABASE_URL_FILE=\(urlFile.path)\n".write(to: config, atomically: true, encoding: .utf8)
            var fromSettings = try #require(
                try DatabaseCommand.parseAsRoot(["copy", "--from", "sqlite:" + file.path, "--config", config.path])
                    as? any AsyncParsableCommand)
            try await fromSettings.run()
            var backup = try #require(
                try DatabaseCommand.parseAsRoot([
                    "backup", "/tmp/never-\(UUID())", "--database-url", text, "--config", TestPostgres.commandSettings,
                ])
                    as? any AsyncParsableCommand)
            await #expect { try await backup.run() } throws: { "\($0)".contains("pg_dump") }
            let store = try PostgresStore(
                url: url, poolSize: 1, timeout: TestPostgres.timeout, logger: TestPostgres.quiet)
            #expect(try await store.user(id: "u")?.identities.map(\.subject) == ["s"])
            await store.close()
        }
    }

    /// `url` as a command line takes it, the schema in `options`.
    static func text(_ url: PostgresURL) -> String {
        var text =
            "postgres://\(url.user):\(url.password ?? "")@\(url.host):\(url.port)/\(url.database)?sslmode=disable"
        if let options = url.options {
            text += "&options=" + (options.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        }
        return text
    }
}

/// A PostgreSQL cluster of the test's own (`scripts/postgres`), which it can crash and restart.
struct TestCluster {
    let directory: String
    let url: PostgresURL

    static let script = Repository.root.appendingPathComponent("scripts/postgres").path

    static func start() async throws -> TestCluster {
        let output = try await run(["start"])
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst("export ".count).split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            values[String(pair[0])] = String(pair[1]).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        return TestCluster(
            directory: try #require(values["LATCHKEY_TEST_POSTGRES_DIR"]),
            url: try PostgresURL(try #require(values["LATCHKEY_TEST_POSTGRES_URL"])))
    }

    func down() async throws { try await Self.run(["down", directory]) }
    func up() async throws { try await Self.run(["up", directory]) }
    func stop() async { _ = try? await Self.run(["stop", directory]) }

    /// Runs the script; its exit is awaited through the termination handler (`waitUntilExit`
    /// never returns on a Swift concurrency thread here).
    @discardableResult
    static func run(_ arguments: [String]) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let exited = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = {
            exited.continuation.yield($0.terminationStatus)
            exited.continuation.finish()
        }
        try process.run()
        var status: Int32 = -1
        for await code in exited.stream { status = code }
        guard status == 0 else { throw TestClusterFailure(arguments: arguments, status: status) }
        // Not read to the end: the PostgreSQL server the script starts inherits the pipe and
        // keeps it open. The few lines the script prints fit in the pipe's buffer.
        return arguments == ["start"] ? String(decoding: pipe.fileHandleForReading.availableData, as: UTF8.self) : ""
    }
}

struct TestClusterFailure: Error, CustomStringConvertible {
    let arguments: [String]
    let status: Int32
    var description: String { "scripts/postgres \(arguments.joined(separator: " ")) exited \(status)" }
}

/// Whether a test's server got past its start (set from inside the stack's body).
final class StartFlag: Sendable {
    let value = Mutex(false)
}
