import Foundation
import LatchkeyServer
import Testing

@testable import LatchkeySQLite

/// Upgrading a database written before migration 3 (session expiry, pruning indexes).
@Suite("SQLite migrations")
struct SQLiteMigrationTests {
    @Test("migration 3 dates existing sessions by their newest refresh token, so they prune on time")
    func sessionExpiryBackfill() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        // The schema as version 2 left it, with a session of two tokens and one of none.
        try await store.transaction { db in
            try db.execute(
                "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)")
            for (index, statements) in SQLiteSchema.migrations.prefix(2).enumerated() {
                for statement in statements { try db.execute(statement) }
                try db.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)", [.integer(index + 1)])
            }
            try db.execute("INSERT INTO users (id, created_at, updated_at) VALUES ('u', 0, 0)")
            try db.execute("INSERT INTO sessions (id, user_id, created_at) VALUES ('two', 'u', 10), ('none', 'u', 20)")
            try db.execute(
                """
                INSERT INTO refresh_tokens (hash, session_id, created_at, expires_at, used_at)
                VALUES (x'01', 'two', 10, 100, 50), (x'02', 'two', 50, 200, NULL)
                """)
        }
        try await store.migrate()
        let foreignKeys = try await store.transaction { db in
            try db.query("PRAGMA foreign_keys").first?.values.first?.integer
        }
        #expect(foreignKeys == 1)
        let at = { (seconds: TimeInterval) in
            StoreContractTests.cutoffs { $0.sessionsEndedBefore = Date(timeIntervalSince1970: seconds) }
        }
        // 'none' had no token: it is dated by its creation.
        #expect(try await store.prune(at(21), limit: 10) == PruneReport(sessions: 1))
        #expect(try await store.prune(at(200), limit: 10) == PruneReport())
        #expect(try await store.prune(at(201), limit: 10) == PruneReport(sessions: 1, refreshTokens: 2))
        try await store.close()
    }
}
