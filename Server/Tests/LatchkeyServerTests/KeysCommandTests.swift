import ArgumentParser
import Foundation
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
}
