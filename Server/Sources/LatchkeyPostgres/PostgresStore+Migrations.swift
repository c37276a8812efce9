import Foundation
import LatchkeyServer
import PostgresNIO

extension PostgresStore {
    /// Applies the numbered migrations not yet recorded in `schema_migrations`, all in one
    /// transaction (PostgreSQL's DDL is transactional: a failed migration leaves nothing behind).
    ///
    /// Servers starting together all call this: the first takes a transaction-scoped advisory lock
    /// (one per schema) and migrates, the others wait for it and then find nothing to do.
    /// A schema newer than this binary knows is refused, before anything is written.
    ///
    /// First one connection of its own (`firstConnection`): a refusal waiting cannot fix (a
    /// wrong password, no such database) is thrown at once as `PostgresConnectionRefused`, and a
    /// database not answering yet is waited for up to 60 s.
    package func migrate() async throws {
        try await migrate(waitingForDatabase: .seconds(60))
    }

    /// The newest migration applied in the connection's schema; 0 when it has no
    /// `schema_migrations` table.
    package func schemaVersion() async throws -> Int {
        try await withConnection("schema version") { connection in
            guard
                try await connection.rows("SELECT to_regclass('schema_migrations')::text").first?
                    .decode(String?.self) != nil
            else { return 0 }
            return try await connection.rows("SELECT COALESCE(MAX(version), 0)::int8 FROM schema_migrations").first?
                .decode(Int.self) ?? 0
        }
    }

    /// `migrate()`, waiting at most `waitingForDatabase` for a database that does not answer yet
    /// (`firstConnection`).
    func migrate(waitingForDatabase: Duration) async throws {
        try await firstConnection(waiting: waitingForDatabase)
        let known = PostgresSchema.migrations.count
        // Migrations may take longer than a request may; a database with another node
        // migrating makes this wait for the lock.
        try await transaction("migrate", timeout: .seconds(600)) { connection in
            try await connection.run("SET LOCAL statement_timeout = 0")
            try await connection.run(
                "SELECT pg_advisory_xact_lock(\(Self.migrationLockClass), hashtext(current_schema()))")
            try await connection.run(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                """)
            let current =
                try await connection.rows("SELECT COALESCE(MAX(version), 0)::int8 FROM schema_migrations").first?
                .decode(Int.self) ?? 0
            // Newer than this binary: it would read and write tables whose meaning it does not know.
            guard current <= known else { throw PostgresNewerSchema(found: current, known: known) }
            for (index, statements) in PostgresSchema.migrations.enumerated() where index + 1 > current {
                for statement in statements { try await connection.run(PostgresQuery(unsafeSQL: statement)) }
                try await connection.run("INSERT INTO schema_migrations (version) VALUES (\(index + 1))")
            }
        }
    }

    /// The schema version this binary migrates to.
    package static var knownSchemaVersion: Int { PostgresSchema.migrations.count }

    /// The first key of the migration lock: "LK" (the second is the schema's hash).
    static let migrationLockClass: Int32 = 0x4C4B
    /// The advisory lock class `prune` takes, so one server prunes at a time.
    static let pruneLockClass: Int32 = 0x4C50
}

/// The database was migrated by a newer Latchkey than this one.
package struct PostgresNewerSchema: Error, Sendable, CustomStringConvertible {
    /// The version found.
    package let found: Int
    /// The newest version this binary knows.
    package let known: Int
    /// What to do about it.
    package var description: String {
        "the database is at schema version \(found), newer than this binary knows (\(known)): run the newer "
            + "latchkey, or restore the backup taken before the upgrade"
    }
}
