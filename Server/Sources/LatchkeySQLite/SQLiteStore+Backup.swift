import Foundation

extension SQLiteStore {
    /// Writes a consistent copy of the database to `path` with `VACUUM INTO`, while the server
    /// keeps serving: the copy is one read transaction's view (WAL readers do not block writers),
    /// compacted, and a complete database on its own (no `-wal` file to carry along).
    ///
    /// - Throws: when `path` already exists (a backup never overwrites anything) or cannot be
    ///   written.
    package func backup(to path: String) async throws {
        // The copy holds the same secrets as the database (sealed signing keys, every user's
        // data). Created by SQLite and made private afterwards, it was readable by every local
        // user while it was written; created 0600 at the path and then reopened by name by
        // SQLite, someone who can write the directory could swap in their own file or a link in
        // between. So it is written inside a new 0700 directory beside the path, then given the
        // path's name with link(2), which never replaces anything: the name appears only once
        // the copy is complete, private, and cannot be redirected.
        guard !FileManager.default.fileExists(atPath: path) else {
            throw SQLiteBackupError("\(path) already exists; a backup never overwrites a file")
        }
        guard let directory = SQLiteFiles.privateDirectory(beside: path) else {
            throw SQLiteBackupError("cannot write a backup beside \(path): \(String(cString: strerror(errno)))")
        }
        let copy = directory + "/backup.sqlite"
        defer {
            unlink(copy)
            rmdir(directory)
        }
        if let code = SQLiteFiles.createPrivate(copy) {
            throw SQLiteBackupError("cannot create the backup \(path): \(String(cString: strerror(code)))")
        }
        do {
            // VACUUM INTO accepts an empty file.
            try await database.run { db in try db.execute("VACUUM INTO ?", [.text(copy)]) }
        } catch let failure as SQLiteFailure {
            throw SQLiteBackupError("cannot write the backup to \(path): \(failure.message)")
        }
        guard link(copy, path) == 0 else {
            let code = errno
            if code == EEXIST { throw SQLiteBackupError("\(path) already exists; a backup never overwrites a file") }
            throw SQLiteBackupError("cannot name the backup \(path): \(String(cString: strerror(code)))")
        }
    }
}

/// A backup that could not be made, with what to change.
package struct SQLiteBackupError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    package let description: String
    init(_ description: String) { self.description = description }
}
