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
