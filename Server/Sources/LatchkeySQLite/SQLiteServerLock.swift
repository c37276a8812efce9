import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The mark of a server using an SQLite database: an exclusive `flock` on `PATH.serve-lock`,
/// held from before the store opens until the process ends.
///
/// Two servers on one SQLite file each keep their own caches (signing keys, rate limits, the
/// verified-token cache) and are not supported; they used to start without a word. A second
/// `serve` on the same file now refuses to start, naming the file. The lock is on a file of its
/// own, not the database: SQLite's own locks are `fcntl` locks, which any close of another
/// descriptor on the database file would release, and on NFS `flock` is emulated by them. The
/// kernel drops the lock when the process dies, so a `kill -9` leaves nothing to clean up. `keys`
/// and `db` commands do not take it: they are meant to run beside a server.
package final class SQLiteServerLock: Sendable {
    private let descriptor: Int32

    /// The lock file's path for a database at `path`.
    package static func lockPath(for path: String) -> String { path + ".serve-lock" }

    /// Takes the lock for the database at `path` (created 0600 if missing), or throws at once
    /// when another process holds it.
    /// - Throws: `SQLiteServerLockError` naming the database and what to do.
    package init(databasePath given: String) throws {
        // The file's real path, so a symbolic link to the database (or a relative path from
        // another directory) names the same lock. Hard links and bind mounts still do not: the
        // database's directory is to be private (docs/deployment.md).
        let path =
            given.withCString { name in realpath(name, nil) }.map { resolved in
                defer { free(resolved) }
                return String(cString: resolved)
            } ?? given
        let lockPath = Self.lockPath(for: path)
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw SQLiteServerLockError(
                description:
                    "cannot create \(lockPath), which marks the database \(path) as in use by a server: "
                    + String(cString: strerror(errno)))
        }
        var status: Int32
        repeat { status = flock(descriptor, LOCK_EX | LOCK_NB) } while status != 0 && errno == EINTR
        guard status == 0 else {
            let code = errno
            close(descriptor)
            throw SQLiteServerLockError(
                description: code == EWOULDBLOCK
                    ? "another Latchkey server is already using the SQLite database \(path) (it holds \(lockPath)): "
                        + "one SQLite file serves one server. Stop the other one, give this one another "
                        + "LATCHKEY_DATABASE_URL, or, for several servers, use PostgreSQL (docs/deployment.md, section 8)"
                    : "cannot lock \(lockPath): \(String(cString: strerror(code)))")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}

/// A server could not take its SQLite database's server lock.
package struct SQLiteServerLockError: Error, Sendable, CustomStringConvertible {
    /// What happened, and what to do.
    package let description: String
}
