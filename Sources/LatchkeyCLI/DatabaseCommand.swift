import ArgumentParser
import Foundation
import LatchkeySQLite
import LatchkeyServer

/// `latchkey db`: the database itself.
struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Back up the database.", subcommands: [Backup.self])

    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a consistent, compact copy of the database to a new file, while servers run.",
            discussion: """
                Uses SQLite's VACUUM INTO on a connection of its own: servers keep reading and writing. The copy \
                is a complete database (restore it by stopping the servers and putting it in place of the \
                database file, with no -wal or -shm file beside it), created 0600: it holds the sealed signing keys.
                """)

        @Argument(help: "The new file to write (never overwritten).")
        var path: String

        @OptionGroup var options: KeysCommand.DatabaseOptions

        mutating func run() async throws {
            let configuration = try options.configuration(checkingKeyProtection: false)
            let path = self.path
            do {
                try await options.withStore(configuration) { store in try await store.backup(to: path) }
            } catch let error as SQLiteBackupError {
                throw CommandError(error.description)
            }
            print("Backup written to \(path).")
        }
    }
}
