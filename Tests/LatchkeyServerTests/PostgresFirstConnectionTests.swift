import Foundation
import LatchkeyServer
import Testing

@testable import LatchkeyPostgres

/// A server's start and every `db` command open one connection before migrating
/// (`PostgresStore.firstConnection`): a refusal that waiting cannot fix ends them at once with
/// PostgreSQL's reason, a database not answering yet is waited for.
@Suite("PostgreSQL: the first connection", .timeLimit(.minutes(2)))
struct PostgresFirstConnectionTests {
    /// What `url` refuses, from a store's migration.
    static func refusal(_ url: PostgresURL) async throws -> PostgresConnectionRefused {
        let store = try PostgresStore(url: url, poolSize: 1, timeout: TestPostgres.timeout, logger: TestPostgres.quiet)
        let outcome = await Self.outcome { try await store.migrate() }
        await store.close()
        guard case .failure(let error) = outcome else { throw Unrefused() }
        return try #require(error as? PostgresConnectionRefused, "\(error)")
    }

    struct Unrefused: Error {}

    /// `body`'s result or error, so that what it opened is closed either way.
    static func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    @Test("a wrong password is refused at once, in PostgreSQL's words, without the password")
    func wrongPassword() async throws {
        guard var url = try TestPostgres.url() else { return }
        url.password = "not-the-Password-4711"
        let refused = try await Self.refusal(url)
        #expect(refused.sqlState == "28P01")
        #expect(refused.description.contains("password authentication failed"))
        #expect(!refused.description.contains("4711"))
    }

    @Test("a database that does not exist is refused at once, naming it")
    func noSuchDatabase() async throws {
        guard var url = try TestPostgres.url() else { return }
        url.database = "no_such_database"
        let refused = try await Self.refusal(url)
        #expect(refused.sqlState == "3D000")
        #expect(refused.description.contains("no_such_database"))
    }

    @Test("TLS asked of a server without it is refused at once, saying how to connect without")
    func noTLS() async throws {
        guard var url = try TestPostgres.url() else { return }
        url.tls = .require
        let refused = try await Self.refusal(url)
        #expect(refused.sqlState == nil && refused.description.contains("sslmode=disable"))
    }

    @Test("nothing listening: retried until the wait is over, then unavailable with the last cause")
    func nothingListening() async throws {
        guard var url = try TestPostgres.url() else { return }
        url.port = 1
        let store = try PostgresStore(url: url, poolSize: 1, timeout: TestPostgres.timeout, logger: TestPostgres.quiet)
        await #expect {
            try await store.migrate(waitingForDatabase: .milliseconds(400))
        } throws: { error in
            let reason = (error as? StoreUnavailable)?.reason ?? ""
            return reason.contains("attempts") && reason.contains("Connection refused")
        }
        await store.close()
    }

    @Test("a database started after the server is waited for, then migrated")
    func startedLater() async throws {
        guard try TestPostgres.url() != nil else { return }
        let cluster = try await TestCluster.start()
        let capture = LogCapture()
        let store = try PostgresStore(
            url: cluster.url, poolSize: 1, timeout: TestPostgres.timeout, logger: capture.logger(label: "test"))
        let outcome = await Self.outcome {
            try await cluster.down()
            let migrating = Task { try await store.migrate() }
            try await eventually("the start waits for the database") {
                capture.all.contains { $0.contains("latchkey.database.waiting") }
            }
            try await cluster.up()
            try await migrating.value
            return try await store.integer("SELECT count(*) FROM schema_migrations")
        }
        await store.close()
        await cluster.stop()
        #expect(try outcome.get() == PostgresStore.knownSchemaVersion)
    }
}
