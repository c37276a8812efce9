import Foundation

extension SQLiteStore {
    /// Writes a consistent copy of the database to `path` with `VACUUM INTO`, while the server
    /// keeps serving: the copy is one read transaction's view (WAL readers do not block writers),
    /// compacted, and a complete database on its own (no `-wal` file to carry along).
    ///
    /// - Throws: when `path` already exists (a backup never overwrites anything) or cannot be
    ///   written.
    public func backup(to path: String) async throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw SQLiteBackupError("\(path) already exists; a backup never overwrites a file")
        }
        do {
            try await database.run { db in try db.execute("VACUUM INTO ?", [.text(path)]) }
        } catch let failure as SQLiteFailure {
            throw SQLiteBackupError("cannot write the backup to \(path): \(failure.message)")
        }
        // The copy holds the same secrets as the database (sealed signing keys, hashed tokens).
        _ = chmod(path, 0o600)
    }
}

/// A backup that could not be made, with what to change.
public struct SQLiteBackupError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
