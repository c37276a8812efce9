import ArgumentParser
import Foundation
import LatchkeySQLite
import LatchkeyServer
import Testing

@testable import LatchkeyCLI

@Suite("latchkey keys")
struct KeysCommandTests {
    @Test("a database that does not exist is refused, not created, and the message says where to look")
    func noNewDatabase() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-keys-\(UUID())/db.sqlite")
            .path
        for arguments in [["list"], ["rotate"]] {
            var command = try #require(
                try KeysCommand.parseAsRoot(
                    arguments + ["--database-url", path, "--dev"]) as? any AsyncParsableCommand)
            await #expect {
                try await command.run()
            } throws: { "\($0)".contains("no database at \(path)") && "\($0)".contains("--dev") }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("the keys and db commands need no Facebook secret: an operator's shell does not have the service's")
    func noFacebookSecret() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-env-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let env = directory.appendingPathComponent("env")
        try "LATCHKEY_FACEBOOK_APP_ID=1234567890\nLATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS=true\n".write(
            to: env, atomically: true, encoding: .utf8)
        let options = try KeysCommand.DatabaseOptions.parse(["--config", env.path])
        #expect(try options.configuration().facebook.apps.isEmpty)
    }

    @Test(
        "roles: the newest unretired key signs, the last retired always verifies, older ones until their tokens expire")
    func roles() {
        let now = Date(timeIntervalSince1970: 10_000)
        let roles = SigningKeyRole.roles(
            [
                ("a", now.addingTimeInterval(-9000), now.addingTimeInterval(-8000)),
                ("b", now.addingTimeInterval(-8000), now.addingTimeInterval(-500)),
                ("c", now.addingTimeInterval(-500), now.addingTimeInterval(-100)),
                ("d", now.addingTimeInterval(-100), nil),
            ], now: now, accessTokenLifetime: 900)
        #expect(roles == ["a": .retired, "b": .verifying, "c": .verifying, "d": .signing])
    }

    @Test("keys list names the key-encryption key that opens each key, and exits 1 when one in use opens under none")
    func listChecksTheKeyEncryptionKey() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-keys-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("latchkey.sqlite").path
        let (old, new) = (KeyEncryptionKey.generate(), KeyEncryptionKey.generate())
        let store = try await SQLiteStore.open(.sqliteFile(database))
        try await store.migrate()
        let kid = try await rotateSigningKey(in: store, protection: SigningKeyProtection(current: old.key), now: Date())
        try await store.close()
        func list(_ settings: String) async throws {
            let config = directory.appendingPathComponent("env-\(UUID())")
            try (settings + "LATCHKEY_DATABASE_URL=\(database)\n").write(to: config, atomically: true, encoding: .utf8)
            var command = try #require(
                try KeysCommand.parseAsRoot(["list", "--config", config.path]) as? any AsyncParsableCommand)
            try await command.run()
        }
        // The key the servers use, and the new one with the old as previous: the command succeeds.
        try await list("LATCHKEY_KEY_ENCRYPTION_KEY=\(old.encoded)\n")
        try await list(
            "LATCHKEY_KEY_ENCRYPTION_KEY=\(new.encoded)\nLATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS=\(old.encoded)\n")
        // A wrong key: the signing key opens under neither, and the command fails naming it.
        await #expect {
            try await list("LATCHKEY_KEY_ENCRYPTION_KEY=\(new.encoded)\n")
        } throws: { error in
            error is CommandError && "\(error)".contains("signing key \(kid) does not open")
                && "\(error)".contains(old.key.id)
        }

        // The table says which key opens each.
        let reopened = try await SQLiteStore.open(.sqliteFile(database))
        let keys = try await reopened.signingKeys()
        try await reopened.close()
        func listing(_ current: KeyEncryptionKey, _ previous: [KeyEncryptionKey] = []) -> [String] {
            var configuration = ServerConfiguration()
            configuration.secrets.keyEncryptionKey = current
            configuration.secrets.previousKeyEncryptionKeys = previous
            return KeysCommand.List.listing(keys, configuration: configuration, now: Date()).lines
        }
        #expect(listing(old.key).last?.hasSuffix("current \(old.key.id)") == true)
        #expect(listing(new.key, [old.key]).last?.hasSuffix("previous \(old.key.id)") == true)
        #expect(listing(new.key).last?.hasSuffix("NONE") == true)
        #expect(listing(new.key).first?.hasSuffix("OPENS UNDER") == true)
    }
}
