import ArgumentParser
import Foundation
import LatchkeyPostgres
import LatchkeySQLite
import LatchkeyServer
import Logging

extension DatabaseCommand {
    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy an SQLite installation into PostgreSQL, sessions and signing keys included.",
            discussion: """
                Copies every table (users, identities, sessions and refresh tokens, signing keys, the audit log, \
                and the short-lived records: spent id tokens, nonces, Easy Logins in progress), so nobody is \
                signed out by the move. Stop the servers first, so nothing changes underneath. Rows already \
                present in the destination are kept, so running it again after an interruption completes the \
                copy; at the end every table must hold as many rows in the destination as in the source, or \
                the command fails. Both databases are migrated first.

                The destination is --to, or else the database the settings name (--config, LATCHKEY_DATABASE_URL, \
                or LATCHKEY_DATABASE_URL_FILE), so its password need not appear on a command line, where `ps` \
                and shell history show it.
                """)

        @Option(help: "The SQLite database to copy from (sqlite:PATH or a path).")
        var from: String

        @Option(
            help: """
                The PostgreSQL database to copy into (postgres://…). Default: the settings' LATCHKEY_DATABASE_URL \
                (or _FILE), which keeps the password off the command line.
                """)
        var to: String?

        @Option(help: "A file of LATCHKEY_NAME=value lines, read for the destination when --to is not given.")
        var config: String?

        @Option(help: "Rows per insert.")
        var batch: Int = 500

        @Option(
            name: .customLong("run-as"),
            help: "Started as root: read the settings and their secret files, then continue as this user.")
        var runAs: String?

        mutating func validate() throws {
            guard (1...5000).contains(batch) else { throw ValidationError("--batch must be between 1 and 5000") }
        }

        /// The destination's URL: `--to`, or the settings' database.
        func destinationURL() throws -> String {
            if let to { return to }
            let settings = try Settings.load(configFile: config)
            guard settings["LATCHKEY_DATABASE_URL"] != nil || settings["LATCHKEY_DATABASE_URL_FILE"] != nil else {
                throw ValidationError(
                    "name the PostgreSQL database to copy into: LATCHKEY_DATABASE_URL or LATCHKEY_DATABASE_URL_FILE "
                        + "(environment or --config), or --to")
            }
            let only = settings.filter { $0.key.hasPrefix("LATCHKEY_DATABASE_URL") }
            return try Settings.configuration(only).database.url
        }

        mutating func run() async throws {
            let source = try DatabaseLocation(from)
            let to = try destinationURL()
            if let runAs { try ServiceUser.become(runAs) }
            let destination = try DatabaseLocation(to)
            guard case .sqliteFile(let path) = source else {
                throw ValidationError("--from must be an SQLite file (sqlite:PATH)")
            }
            guard case .postgres = destination else {
                throw ValidationError(
                    "the destination must be a PostgreSQL URL (postgres://…), not \(destination.displayName)")
            }
            var configuration = ServerConfiguration()
            configuration.database.url = from
            let logger = Logger(label: "latchkey")
            let batch = self.batch
            let shownSource = DatabaseLocation.redacted(path)
            let counts = try await StoreOpening.withStore(configuration, logger: logger, mustExist: true) { opened in
                guard case .sqlite(let reader) = opened else { throw CommandError("--from is not SQLite") }
                configuration.database.url = to
                // A slow network to the destination should fail a batch, not the whole copy early.
                configuration.database.timeout = 60
                return try await StoreOpening.withStore(configuration, logger: logger) { opened in
                    guard case .postgres(let writer) = opened else { throw CommandError("--to is not PostgreSQL") }
                    return try await DatabaseTransfer.copy(from: reader, to: writer, batch: batch) { table, added in
                        print("\(table.name): \(added) new rows")
                    }
                }
            }
            print(
                "Copied \(shownSource) to \(destination.displayName): "
                    + counts.map { "\($0.table) \($0.rows)" }.joined(separator: ", ") + " (row counts verified).")
        }
    }
}

/// The copy itself, apart from the command so tests run it on their own stores.
enum DatabaseTransfer {
    /// Copies every table in `batch`-row pages, then checks each table holds as many rows in the
    /// destination as in the source. Returns the verified counts.
    static func copy(
        from source: some TransferSource, to destination: some TransferDestination, batch: Int,
        progress: (TransferTable, Int) -> Void = { _, _ in }
    ) async throws -> [(table: String, rows: Int)] {
        var counts: [(table: String, rows: Int)] = []
        for table in TransferTable.all {
            var position = 0
            var added = 0
            while true {
                let page = try await source.transferRows(table, after: position, limit: batch)
                guard !page.rows.isEmpty else { break }
                added += try await destination.transferInsert(table, rows: page.rows)
                position = page.next
            }
            progress(table, added)
            let expected = try await source.transferCount(table)
            let found = try await destination.transferCount(table)
            guard expected == found else {
                throw CommandError(
                    "\(table.name): the source has \(expected) rows, the destination \(found). Were servers still "
                        + "writing to the source, or does the destination hold another installation? Stop the "
                        + "servers and run the copy again (rows already copied are kept).")
            }
            counts.append((table.name, found))
        }
        try await destination.transferFinished()
        return counts
    }
}
