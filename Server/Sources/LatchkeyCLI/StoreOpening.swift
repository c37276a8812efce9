import Foundation
import LatchkeyPostgres
import LatchkeySQLite
import LatchkeyServer
import Logging

/// The one place a command opens the database `LATCHKEY_DATABASE_URL` names, whichever backend:
/// `serve`, `keys`, `db` and the tests all go through it.
enum StoreOpening {
    /// An open store of either backend.
    enum Opened: Sendable {
        case sqlite(SQLiteStore)
        case postgres(PostgresStore)

        /// The store, as the server uses it.
        var store: any LatchkeyStore {
            switch self {
            case .sqlite(let store): store
            case .postgres(let store): store
            }
        }

        /// Closes it.
        func close() async {
            switch self {
            case .sqlite(let store): try? await store.close()
            case .postgres(let store): await store.close()
            }
        }
    }

    /// Opens `location` (not migrated). An SQLite file is created when missing, unless
    /// `mustExist`: commands that manage an existing installation never start an empty one (and
    /// `withStore` refuses a database of either backend that was never migrated).
    /// `serving`: the store is a server's, which holds the SQLite file's `SQLiteServerLock`.
    static func open(
        _ location: DatabaseLocation, configuration: ServerConfiguration, logger: Logger, mustExist: Bool = false,
        serving: Bool = false
    ) async throws -> Opened {
        switch location {
        case .sqliteFile(let path):
            // A key added to a database no server reads is lost work; the usual cause is running
            // from another directory or without --dev.
            if mustExist, !FileManager.default.fileExists(atPath: path) {
                throw CommandError(
                    "no database at \(DatabaseLocation.redacted(path)): `latchkey serve` creates it on first start. "
                        + "Run this from the directory serve runs in, pass --dev for `serve --dev`'s database, or "
                        + "--database-url.")
            }
            return .sqlite(try await SQLiteStore.open(location, serving: serving))
        case .sqliteMemory:
            return .sqlite(try await SQLiteStore.open(location))
        case .postgres(let url):
            var poolLogger = logger
            // The pool reports each failed connection attempt at info; one line per failure is
            // the operator's signal, the attempts' details are noise.
            poolLogger.logLevel = max(logger.logLevel, .warning)
            return .postgres(
                try PostgresStore(
                    url: url, poolSize: configuration.database.poolSize,
                    timeout: .milliseconds(Int64(configuration.database.timeout * 1000)), logger: poolLogger))
        }
    }

    /// The database as the banner names it (no password), for messages.
    static func displayName(_ configuration: ServerConfiguration) -> String {
        (try? DatabaseLocation(configuration.database.url).displayName) ?? "the database"
    }

    /// Runs `body` with the store of `configuration`, migrated, and closes it afterwards.
    static func withStore<T>(
        _ configuration: ServerConfiguration, logger: Logger, mustExist: Bool = false,
        migrate: Bool = true, serving: Bool = false, _ body: (Opened) async throws -> T
    ) async throws -> T {
        let opened = try await open(
            try DatabaseLocation(configuration.database.url), configuration: configuration, logger: logger,
            mustExist: mustExist, serving: serving)
        do {
            // An existing installation has a schema; an empty database is a wrong URL (another
            // database or schema on the same server), where migrating would create Latchkey's tables.
            if mustExist, try await opened.store.schemaVersion() == 0 {
                throw CommandError(
                    "\(displayName(configuration)) holds no Latchkey data (it was never migrated): "
                        + "check LATCHKEY_DATABASE_URL; `latchkey serve` or `latchkey db migrate` creates the schema.")
            }
            if migrate { try await opened.store.migrate() }
            let result = try await body(opened)
            await opened.close()
            return result
        } catch {
            await opened.close()
            throw error
        }
    }
}
