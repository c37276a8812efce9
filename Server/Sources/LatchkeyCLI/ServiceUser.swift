import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `--run-as`: a command started by root reads its settings and their root-only secret files
/// (the key-encryption key, the database URL), then continues as the service's user. A command
/// that needs two secrets cannot take both on standard input, and `/etc/latchkey`'s files are
/// for root (systemd hands them to the service only); running on as the service's user keeps the
/// files the command creates (SQLite's `-wal` and `-shm`, a backup) the service's.
enum ServiceUser {
    /// Becomes `name` (its groups, group and user id), for good. Running as `name` already is
    /// fine; anyone else but root is refused.
    /// - Throws: `CommandError` naming what went wrong; nothing is opened before it.
    static func become(_ name: String) throws {
        guard let entry = getpwnam(name) else {
            throw CommandError("--run-as \(name): no such user")
        }
        let uid = entry.pointee.pw_uid
        let gid = entry.pointee.pw_gid
        if getuid() == uid, geteuid() == uid { return }
        guard geteuid() == 0 else {
            throw CommandError(
                "--run-as \(name) needs root (sudo): the command reads the root-only secret files as root, then "
                    + "continues as \(name)")
        }
        // Groups first, then the group, then the user: once the user id changes, the rest is
        // no longer allowed. glibc applies each to every thread of the process.
        guard initgroups(name, gid) == 0, setgid(gid) == 0, setuid(uid) == 0 else {
            throw CommandError("--run-as \(name): cannot become \(name): \(String(cString: strerror(errno)))")
        }
        // Root must be gone for good, not only for now, its supplementary groups included (root's
        // group opens what is root's by group).
        guard getuid() == uid, geteuid() == uid, getegid() == gid, setuid(0) != 0,
            gid == 0 || !supplementaryGroups().contains(0)
        else {
            throw CommandError("--run-as \(name): the process could not drop root")
        }
    }

    /// The process's supplementary group ids.
    static func supplementaryGroups() -> [gid_t] {
        let count = getgroups(0, nil)
        guard count > 0 else { return [] }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let read = getgroups(count, &groups)
        return Array(groups.prefix(max(0, Int(read))))
    }
}
