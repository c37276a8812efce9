import Foundation
import LatchkeySQLite
import LatchkeyServer
import Testing

/// `latchkey admin keys`, run as the operator runs it (the built binary, on the database file a
/// server uses): a key made, listed without its secret, accepted by the store's check, revoked.
@Suite("latchkey admin keys")
struct AdminCommandTests {
    @Test("create prints the key alone on its last line; list never shows a secret; revoke refuses it after")
    func createListRevoke() async throws {
        let binary = try #require(LatchkeyBinary.url, "swift test builds the latchkey executable")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-admin-\(UUID()).sqlite")
        defer { try? FileManager.default.removeItem(at: file) }
        let store = try await SQLiteStore.open(.sqliteFile(file.path))
        try await store.migrate()
        try await store.close()
        let database = ["--database-url", file.path]

        let created = try await ChildProcess.run(
            binary, ["admin", "keys", "create", "--name", "ops laptop"] + database)
        #expect(created.status == 0, "\(created.output)")
        let lines = created.output.split(separator: "\n").map(String.init)
        let key = try #require(lines.last)
        let secret = try #require(AdminKeySecret(key), "the last line is the key, alone")

        let listed = try await ChildProcess.run(binary, ["admin", "keys", "list"] + database)
        #expect(listed.status == 0 && listed.output.contains(secret.id) && listed.output.contains("ops laptop"))
        #expect(!listed.output.contains(secret.secret), "never the secret")

        let reopened = try await SQLiteStore.open(.sqliteFile(file.path))
        let stored = try #require(try await reopened.adminKey(id: secret.id))
        #expect(secret.matches(stored) && stored.revokedAt == nil && stored.name == "ops laptop")
        try await reopened.close()

        // The whole key works as the id too (what an operator pastes).
        let revoked = try await ChildProcess.run(binary, ["admin", "keys", "revoke", key] + database)
        #expect(revoked.status == 0, "\(revoked.output)")
        #expect(!revoked.output.contains(secret.secret))
        let unknown = try await ChildProcess.run(binary, ["admin", "keys", "revoke", "0000000000000000"] + database)
        #expect(unknown.status != 0 && unknown.output.contains("no admin key"))
        let bad = try await ChildProcess.run(binary, ["admin", "keys", "create", "--name", ""] + database)
        #expect(bad.status != 0 && bad.output.contains("--name"))

        let after = try await SQLiteStore.open(.sqliteFile(file.path))
        #expect(try await after.adminKey(id: secret.id)?.revokedAt != nil)
        try await after.close()
    }
}
