import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Files only their owner may read, written so that no other user ever gets a chance to.
///
/// `Data.write(to:options: .atomic)` followed by a `chmod` leaves the token file readable under the
/// umask (usually 0644) between the two calls, and leaves it that way for good when the process
/// dies in between. Here the file is born 0600 (`open` with `O_CREAT | O_EXCL`), filled, flushed,
/// and only then renamed over the old one, so a reader sees the old file or the new one, never a
/// partial or world-readable one.
enum PrivateFile {
    /// Replaces the file at `url` with `data`, atomically; the file is created with mode 0600 and
    /// its directory, when missing, with mode 0700.
    /// - Throws: `POSIXError` from the failing system call; nothing is left behind then.
    static func replace(_ url: URL, with data: Data) throws {
        let directory = url.deletingLastPathComponent()
        try createPrivateDirectory(directory)
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp").path
        try create(atPath: temporary, contents: data)
        guard rename(temporary, url.path) == 0 else {
            let error = Self.lastError()
            unlink(temporary)
            throw error
        }
        // Makes the rename itself durable; best effort, as the new file is complete either way.
        let descriptor = open(directory.path, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            _ = fsync(descriptor)
            _ = close(descriptor)
        }
    }

    /// Creates a new file at `path` with mode 0600 (the umask may only take bits away) and writes
    /// `contents` to disk. No `chmod` follows: the mode the file is born with is the one it keeps.
    /// `O_EXCL` refuses an existing path, symbolic links included, so nothing planted there is
    /// written through. On failure the file is removed.
    /// - Throws: `POSIXError` from the failing system call.
    static func create(atPath path: String, contents: Data) throws {
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Self.lastError() }
        do {
            try writeAll(contents, to: descriptor)
            guard fsync(descriptor) == 0 else { throw Self.lastError() }
        } catch {
            _ = close(descriptor)
            unlink(path)
            throw error
        }
        guard close(descriptor) == 0 else {
            let error = Self.lastError()
            unlink(path)
            throw error
        }
    }

    /// Writes every byte, resuming after short writes and interruptions by signals.
    private static func writeAll(_ data: Data, to descriptor: Int32) throws {
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard var next = buffer.baseAddress else { return }
            var remaining = buffer.count
            while remaining > 0 {
                let written = write(descriptor, next, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Self.lastError()
                }
                next += written
                remaining -= written
            }
        }
    }

    /// Creates `directory` with mode 0700 when missing (its parents with the defaults); an
    /// existing directory is left as it is.
    static func createPrivateDirectory(_ directory: URL) throws {
        try FileManager.default.createDirectory(
            at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else { throw Self.lastError() }
    }

    /// `errno` as a throwable error.
    static func lastError() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}
