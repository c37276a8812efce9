import Foundation
import LatchkeyServer
import Testing

@testable import LatchkeySQLite

/// `latchkey db copy` moves what `TransferTable.all` names: it must name every table and column
/// the schema has, or a copy drops data while its row counts still verify.
@Suite("Transfer tables")
struct TransferTableTests {
    @Test("the transfer list names every table and column of the schema")
    func complete() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        try await store.migrate()
        let schema: [String: Set<String>] = try await store.database.run { db in
            var tables: [String: Set<String>] = [:]
            let names = try db.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_migrations'"
            ).compactMap { $0.column("name")?.string }
            for name in names {
                tables[name] = Set(
                    try db.query("SELECT name FROM pragma_table_info('\(name)')").compactMap {
                        $0.column("name")?.string
                    })
            }
            return tables
        }
        let listed = Dictionary(uniqueKeysWithValues: TransferTable.all.map { ($0.name, Set($0.columns.map(\.name))) })
        #expect(listed == schema)
        try await store.close()
    }
}
