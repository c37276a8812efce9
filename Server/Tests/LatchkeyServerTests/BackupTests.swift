import Foundation
import LatchkeyAPI
import LatchkeyServer
import Synchronization
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

    @Test(
        "a backup is private from its creation: watched while it is written, it is never readable by others",
        .enabled(if: !TestStores.postgres, "SQLite's own backup"))
    func privateWhileWritten() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-backup-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try await SQLiteStore.open(.sqliteFile(directory.appendingPathComponent("db.sqlite").path))
        try await store.migrate()
        // 32 MB to copy, so that the copy is being written for a while, not an instant.
        try await store.database.run { db in
            try db.execute("CREATE TABLE filler (data BLOB)")
            try db.execute(
                "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 128) "
                    + "INSERT INTO filler SELECT randomblob(262144) FROM n")
        }
        let path = directory.appendingPathComponent("backup.sqlite").path
        let watcher = ModeWatcher(path: path)
        try await store.backup(to: path)
        let seen = await watcher.stop()
        try await store.close()
        // The name may appear only as the copy is complete (it does now), so the watcher may never
        // see it; whatever it saw, and what is there now, is private.
        #expect(
            seen.isSubset(of: [0o600]), "modes seen while the backup was written: \(seen.map { String($0, radix: 8) })")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // No private directory of the copy's left beside it.
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(!left.contains { $0.hasPrefix(".latchkey-backup-") })
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

/// Watches a path from a thread of its own, recording every permission mode it has, until stopped.
private final class ModeWatcher: Sendable {
    private let state = Mutex((stop: false, finished: false, modes: Set<UInt32>()))

    init(path: String) {
        Thread.detachNewThread { [self] in
            var info = stat()
            while !state.withLock({ $0.stop }) {
                if stat(path, &info) == 0 {
                    let mode = UInt32(info.st_mode) & 0o777
                    state.withLock { _ = $0.modes.insert(mode) }
                }
            }
            state.withLock { $0.finished = true }
        }
    }

    /// Stops watching; the modes seen.
    func stop() async -> Set<UInt32> {
        state.withLock { $0.stop = true }
        while !state.withLock({ $0.finished }) { await Task.yield() }
        return state.withLock { $0.modes }
    }
}
