import Foundation
import LatchkeyServer
import Logging
import Testing

@testable import LatchkeyPostgres

/// The PostgreSQL the tests use: the throwaway cluster `scripts/postgres start` runs (its URL in
/// `LATCHKEY_TEST_POSTGRES_URL`; `scripts/test` starts and removes it). Each store gets a schema
/// of its own, so tests run in parallel against one database without seeing each other.
///
/// Without the URL, PostgreSQL backends are left out with a note, except with `CI=true`: then
/// the test fails, so CI never passes by testing less.
enum TestPostgres {
    /// The cluster's URL, or `nil` when none was started outside CI.
    static func url() throws -> PostgresURL? {
        guard let text = ProcessInfo.processInfo.environment["LATCHKEY_TEST_POSTGRES_URL"], !text.isEmpty else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                throw TestPostgresMissing()
            }
            return nil
        }
        return try PostgresURL(text)
    }

    static let quiet: Logger = {
        var logger = Logger(label: "test.postgres")
        logger.logLevel = .critical
        return logger
    }()

    /// The test stores' operation timeout: a bound on a hang, not a check of speed. When a full
    /// pass starts, several hundred tests wait for two cooperative threads: even a test that only
    /// compares two strings reports 25–28 s (`CI=true .ci/run`, both locally and in a fresh clone),
    /// and an operation on a new store needs several turns of that queue (the pool's start, the
    /// connection, the lease, the answer). At 30 s, eight operations in one run ran out of time
    /// with PostgreSQL idle (its log showed no lock waits).
    static let timeout: Duration = .seconds(120)

    /// A settings file for the command-line tests that reach PostgreSQL: the commands' own
    /// `LATCHKEY_DATABASE_TIMEOUT` (5 s by default) ran out in a full CI pass, for the reason
    /// `timeout` above gives, so they get the test stores' bound.
    static let commandSettings: String = {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-test-commands-\(UUID())")
        try? "LATCHKEY_DATABASE_TIMEOUT=\(timeout.components.seconds)\n".write(
            to: file, atomically: true, encoding: .utf8)
        return file.path
    }()

    /// Schemas in use at once. Swift Testing starts every test together; on PostgreSQL each holds
    /// a few connections (its store's pool, this admin connection), and with a few hundred tests the
    /// cluster ran out of connections (`max_connections`): thousands of refused connections,
    /// operations waiting 30 s for one, and runs that failed or seemed to hang.
    static let schemas = TestLock(permits: 48)

    /// Set while a task holds one of `schemas`: a schema nested in another takes no second permit
    /// (which could leave every holder waiting for one).
    @TaskLocal static var holdsSchemaPermit = false

    /// A fresh, empty schema for `body`'s store(s), dropped afterwards: `body` gets the URL that
    /// selects it (`options=-c search_path=…`). At most `schemas` permits' worth run at once.
    static func withSchema<T>(_ base: PostgresURL, _ body: (PostgresURL) async throws -> T) async throws -> T {
        if holdsSchemaPermit { return try await withFreshSchema(base, body) }
        await schemas.acquire()
        do {
            let result = try await $holdsSchemaPermit.withValue(true) { try await withFreshSchema(base, body) }
            await schemas.release()
            return result
        } catch {
            await schemas.release()
            throw error
        }
    }

    private static func withFreshSchema<T>(
        _ base: PostgresURL, _ body: (PostgresURL) async throws -> T
    ) async throws -> T {
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let admin = try PostgresStore(url: base, poolSize: 1, timeout: timeout, logger: quiet)
        var scoped = base
        scoped.options = "-c search_path=\(schema)"
        do {
            try await admin.execute("CREATE SCHEMA \(schema)", as: "test create schema")
            let result = try await body(scoped)
            try await admin.execute("DROP SCHEMA \(schema) CASCADE", as: "test drop schema")
            await admin.close()
            return result
        } catch {
            try? await admin.execute("DROP SCHEMA \(schema) CASCADE")
            await admin.close()
            throw error
        }
    }

    /// `body` with a migrated store on a fresh schema, closed afterwards.
    static func withStore<T>(
        _ base: PostgresURL, poolSize: Int = 4, timeout: Duration = TestPostgres.timeout, fastPaths: Bool = true,
        _ body: (PostgresStore) async throws -> T
    ) async throws -> T {
        try await withSchema(base) { url in
            let store = try PostgresStore(
                url: url, poolSize: poolSize, timeout: timeout, logger: quiet, fastPaths: fastPaths)
            do {
                try await store.migrate()
                let result = try await body(store)
                await store.close()
                return result
            } catch {
                await store.close()
                throw error
            }
        }
    }
}

extension PostgresStore {
    /// Runs `sql` (tests only: set-up, inspection, damage).
    func execute(_ sql: String, as operation: StaticString = "test execute") async throws {
        try await withConnection(operation) { connection in try await connection.run(.init(unsafeSQL: sql)) }
    }

    /// The first two columns of every row of `sql`, as strings (tests only).
    func pairs(_ sql: String) async throws -> [(String, String)] {
        try await withConnection("test") { connection in
            try await connection.rows(.init(unsafeSQL: sql)).map { try $0.decode((String, String).self) }
        }
    }

    /// The first column of the first row of `sql`, as an integer (tests only).
    func integer(_ sql: String) async throws -> Int {
        try await withConnection("test integer") { connection in
            try await connection.rows(.init(unsafeSQL: sql)).first?.decode(Int.self) ?? 0
        }
    }
}

struct TestPostgresMissing: Error, CustomStringConvertible {
    var description: String {
        "CI=true but LATCHKEY_TEST_POSTGRES_URL is not set: run the tests through scripts/test, which starts "
            + "PostgreSQL (scripts/postgres)"
    }
}
