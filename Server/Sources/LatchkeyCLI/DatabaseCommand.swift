import ArgumentParser
import Foundation
import LatchkeyPostgres
import LatchkeySQLite
import LatchkeyServer
import Logging

/// `latchkey db`: the database itself.
struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Migrate, back up, or move the database.",
        subcommands: [Migrate.self, Backup.self, Copy.self])

    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bring the database's schema up to this version of Latchkey, then exit.",
            discussion: """
                `latchkey serve` does the same before it listens; run this to migrate ahead of a rolling \
                upgrade, or from a deploy job. Safe to run while servers run and on several machines at once \
                (PostgreSQL: one migrates under an advisory lock, the others wait and find nothing to do). A \
                database already migrated by a newer Latchkey is refused, untouched.
                """)

        @OptionGroup var options: KeysCommand.DatabaseOptions

        mutating func run() async throws {
            let configuration = try options.configuration(checkingKeyProtection: false)
            let location = try DatabaseLocation(configuration.database.url)
            try await StoreOpening.withStore(configuration, logger: Logger(label: "latchkey")) { _ in }
            print("Database \(location.displayName) is migrated.")
        }
    }

    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a consistent, compact copy of an SQLite database to a new file, while servers run.",
            discussion: """
                Uses SQLite's VACUUM INTO on a connection of its own: servers keep reading and writing. The copy \
                is a complete database (restore it by stopping the servers and putting it in place of the \
                database file, with no -wal or -shm file beside it), created 0600: it holds the sealed signing keys. \
                For PostgreSQL, use pg_dump (docs/deployment.md).
                """)

        @Argument(help: "The new file to write (never overwritten).")
        var path: String

        @OptionGroup var options: KeysCommand.DatabaseOptions

        mutating func run() async throws {
            let configuration = try options.configuration(checkingKeyProtection: false)
            let path = self.path
            do {
                try await StoreOpening.withStore(configuration, logger: Logger(label: "latchkey"), mustExist: true) {
                    opened in
                    guard case .sqlite(let store) = opened else {
                        throw CommandError(
                            "db backup copies SQLite files; back up PostgreSQL with pg_dump (docs/deployment.md)")
                    }
                    try await store.backup(to: path)
                }
            } catch let error as SQLiteBackupError {
                throw CommandError(error.description)
            }
            print("Backup written to \(path).")
        }
    }
}
