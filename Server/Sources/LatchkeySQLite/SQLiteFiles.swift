import Foundation
import LatchkeyServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The database file and its directory, made private before SQLite opens them: the file holds
/// every session and refresh-token hash, so it is created 0600 and the directories the server
/// creates 0700, whatever the umask. SQLite gives the `-wal` and `-shm` files the database file's
/// permissions (`findCreateFileMode` in its Unix VFS), so they follow.
enum SQLiteFiles {
    /// Creates missing directories (0700) and the file (0600), and makes an existing file and its
    /// `-wal`/`-shm` companions 0600.
    /// - Throws: `SQLiteFilesError` naming the path and the system's reason.
    static func prepare(_ path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try createDirectories(directory) }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SQLiteFilesError(path: path, errno: errno) }
        defer { close(descriptor) }
        // Always 0600, through the descriptor: an existing file may be readable by others, and the
        // database must be readable and writable by its owner anyway.
        guard fchmod(descriptor, 0o600) == 0 else { throw SQLiteFilesError(path: path, errno: errno) }
        for companion in [path + "-wal", path + "-shm"] {
            // Opened without following a link, and changed through the descriptor: what is checked
            // is what is changed, and a link planted in the directory is not followed.
            let companionDescriptor = open(companion, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard companionDescriptor >= 0 else {
                if errno == ENOENT { continue }
                throw SQLiteFilesError(path: companion, errno: errno)
            }
            defer { close(companionDescriptor) }
            guard fchmod(companionDescriptor, 0o600) == 0 else { throw SQLiteFilesError(path: companion, errno: errno) }
        }
    }

    /// Creates `path` empty and 0600 in one step, never over an existing file (`O_EXCL`).
    /// - Returns: `nil`, or the system's error number (`EEXIST` when something is already there).
    static func createPrivate(_ path: String) -> Int32? {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return errno }
        // open's mode is cut by the umask; fchmod makes it exactly owner read and write.
        let status = fchmod(descriptor, 0o600) == 0 ? nil : errno
        close(descriptor)
        if status != nil { unlink(path) }
        return status
    }

    /// A new directory (0700, `mkdtemp`) beside `path`, on the same file system, for writing a
    /// file that then takes `path`'s name with `link`: nobody else can reach into it meanwhile,
    /// even when `path`'s own directory is writable by others.
    /// - Returns: the directory, or `nil` with `errno` set.
    static func privateDirectory(beside path: String) -> String? {
        let parent = (path as NSString).deletingLastPathComponent
        // mkdtemp replaces the name's last six characters, which must be "X", with random ones.
        let random = String(repeating: "X", count: 6)
        var template = Array(((parent.isEmpty ? "." : parent) + "/.latchkey-backup-" + random).utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            guard let start = buffer.baseAddress, let made = mkdtemp(start) else { return nil }
            return String(cString: made)
        }
    }

    /// `mkdir -p` with mode 0700 for each directory it creates; existing ones are left as they are
    /// (they may be shared, such as `/var/lib`).
    private static func createDirectories(_ directory: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue {
            return
        }
        let parent = (directory as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != directory { try createDirectories(parent) }
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw SQLiteFilesError(path: directory, errno: errno)
        }
    }
}

/// The database file or a directory on its path could not be created or made private.
struct SQLiteFilesError: Error, Sendable, CustomStringConvertible {
    let path: String
    let errno: Int32
    /// The path as `DatabaseLocation.redacted` prints it: a URL mistaken for a path may hold a password.
    /// A relative path says which directory it was taken in: under systemd that is `/`, and
    /// "Permission denied" alone sent operators looking at the wrong place.
    var description: String {
        var text =
            "cannot use \(DatabaseLocation.redacted(path)) for the database: \(String(cString: strerror(errno))) "
            + "(LATCHKEY_DATABASE_URL must name a file in a directory this user can write)"
        if !path.hasPrefix("/") {
            let directory = FileManager.default.currentDirectoryPath
            text +=
                "; the path is relative, taken in the working directory \(directory)"
                + " (a service manager such as systemd starts services in /): name an absolute path, such as"
                + " LATCHKEY_DATABASE_URL=/var/lib/latchkey/latchkey.sqlite"
        }
        return text
    }
}
