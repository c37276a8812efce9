import ArgumentParser
import Foundation
import LatchkeySQLite
import LatchkeyServer

/// `latchkey keys rotate`: a new session signing key; older keys keep verifying until their tokens expire.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Manage session signing keys.", subcommands: [Rotate.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a new signing key; running servers use it after their next start.")

        @Option(help: "SQLite path or URL (LATCHKEY_DATABASE_URL).")
        var databaseURL: String?

        mutating func run() async throws {
            let url =
                databaseURL ?? ProcessInfo.processInfo.environment["LATCHKEY_DATABASE_URL"]
                ?? "latchkey-data/latchkey.sqlite"
            let store = try await SQLiteStore.open(try DatabaseLocation(url))
            try await store.migrate()
            let kid = try await rotateSigningKey(in: store, now: Date())
            print("New signing key \(kid); previous keys stay published until their tokens expire.")
            try await store.close()
        }
    }
}
