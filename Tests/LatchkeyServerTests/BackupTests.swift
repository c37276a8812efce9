import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

@testable import LatchkeySQLite

@Suite("Database backup")
struct BackupTests {
    @Test(
        "a backup restores: the copy opens on its own with every user; it is 0600 and never overwrites",
        .enabled(if: !TestStores.postgres, "SQLite's own backup"))
    func restore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-backup-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("backup.sqlite").path
        try await Stack.run { (stack: Stack) async throws in
            var users: [String] = []
            for person in ["alice", "bob"] {
                let body = try await stack.signIn(["accessToken": .string(try await stack.facebookToken(person))])
                    .json()
                users.append(try #require(body["user"]?["id"]?.stringValue))
            }
            let store = try #require(stack.store as? SQLiteStore)
            try await store.backup(to: path)
            await #expect {
                try await store.backup(to: path)
            } throws: { "\($0)".contains("already exists") }
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            // Restored: a store on the copy alone (no -wal beside it) has the users and the keys.
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            let restored = try await SQLiteStore.open(.sqliteFile(path))
            try await restored.migrate()
            for id in users { #expect(try await restored.user(id: id)?.id == id) }
            #expect(try await restored.signingKeys().count == 1)
            try await restored.close()
        }
    }

    @Test("a database migrated by a newer binary is refused with what to do")
    func newerSchema() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        try await store.migrate()
        try await store.database.run { db in
            try db.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)")
        }
        await #expect {
            try await store.migrate()
        } throws: { "\($0)".contains("schema version 999, newer than this binary knows") }
        try await store.close()
    }
}
