import Foundation
import LatchkeySQLite
import LatchkeyServer
import Testing

/// The store behind the server in the HTTP tests: in-memory SQLite, or, with
/// `LATCHKEY_TEST_DATABASE=postgres` (the second pass of `scripts/test`), a fresh PostgreSQL
/// schema, so every HTTP test runs on both backends.
enum TestStores {
    /// Whether this run puts the HTTP tests on PostgreSQL.
    static var postgres: Bool { ProcessInfo.processInfo.environment["LATCHKEY_TEST_DATABASE"] == "postgres" }

    /// `body` with a fresh store (not migrated: `buildApplication` migrates), closed afterwards.
    static func withServerStore(
        _ given: (any LatchkeyStore)? = nil, _ body: (any LatchkeyStore) async throws -> Void
    ) async throws {
        if let given { return try await body(given) }
        if postgres {
            guard let url = try TestPostgres.url() else { throw TestPostgresMissing() }
            try await TestPostgres.withStore(url) { store in try await body(store) }
            return
        }
        let store = try await SQLiteStore.open(.sqliteMemory)
        do {
            try await body(store)
        } catch {
            try await store.close()
            throw error
        }
        try await store.close()
    }
}
