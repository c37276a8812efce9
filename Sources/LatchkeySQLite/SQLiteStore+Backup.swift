import Foundation

extension SQLiteStore {
    /// Writes a consistent copy of the database to `path` with `VACUUM INTO`, while the server
    /// keeps serving: the copy is one read transaction's view (WAL readers do not block writers),
    /// compacted, and a complete database on its own (no `-wal` file to carry along).
    ///
    /// - Throws: when `path` already exists (a backup never overwrites anything) or cannot be
    ///   written.
    public func backup(to path: String) async throws {
        // The copy holds the same secrets as the database (sealed signing keys, every user's
        // data), so it is created 0600 and empty before SQLite writes into it (VACUUM INTO
        // accepts an empty file): created by SQLite and made private afterwards, it was readable
        // by every local user while it was being written.
        if let code = SQLiteFiles.createPrivate(path) {
            if code == EEXIST { throw SQLiteBackupError("\(path) already exists; a backup never overwrites a file") }
            throw SQLiteBackupError("cannot create the backup \(path): \(String(cString: strerror(code)))")
        }
        do {
            try await database.run { db in try db.execute("VACUUM INTO ?", [.text(path)]) }
        } catch let failure as SQLiteFailure {
            // A half-written copy is worse than none.
            unlink(path)
            throw SQLiteBackupError("cannot write the backup to \(path): \(failure.message)")
        }
    }
}

/// A backup that could not be made, with what to change.
public struct SQLiteBackupError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
