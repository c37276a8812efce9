import Dispatch
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An exclusive lock on a file shared by every process that opens it (`flock`), e.g. an app and
/// its extension over one credential file in an app-group container.
///
/// `flock` locks belong to an open file description, so two opens in one process exclude each other
/// too (unlike `fcntl` locks): two clients created over one file in the same app are covered.
/// Waiting blocks a thread, so it happens on a Dispatch queue, never on Swift's cooperative pool;
/// the holder keeps it only for one refresh (bounded by the transport's timeout).
///
/// On iOS, a process suspended while holding a file lock in an app-group container is terminated
/// (0xdead10cc): an app sharing a file store with an extension should keep a refresh from being
/// suspended mid-way (a background task assertion around calls that may refresh).
enum FileLock {
    /// Runs `body` while holding the lock on `url` (created 0600, directory 0700, if missing).
    static func run<T: Sendable>(at url: URL, _ body: @Sendable () async throws -> T) async throws -> T {
        let descriptor = try await acquire(url)
        defer { close(descriptor) }  // closing the descriptor releases the lock
        return try await body()
    }

    private static func acquire(_ url: URL) async throws -> Int32 {
        try PrivateFile.createPrivateDirectory(url.deletingLastPathComponent())
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw PrivateFile.lastError() }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                var status: Int32
                repeat { status = flock(descriptor, LOCK_EX) } while status != 0 && errno == EINTR
                if status == 0 {
                    continuation.resume(returning: descriptor)
                } else {
                    let error = PrivateFile.lastError()
                    close(descriptor)
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
