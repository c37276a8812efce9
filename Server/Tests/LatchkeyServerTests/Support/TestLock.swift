/// A lock tests take around work that must not overlap across suites, which Swift Testing runs in
/// parallel.
actor TestLock {
    /// Holders that may still come in.
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// - Parameter permits: how many may hold it at once.
    init(permits: Int = 1) { free = permits }

    /// Launching a process must not overlap a test that holds hundreds of sockets open: Foundation's
    /// `Process.run()` crashed copying file-descriptor state (signal 11 in memcpy) when the two
    /// met in one CI run.
    static let fileDescriptors = TestLock()

    /// Runs `body` holding the lock.
    func withLock<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    /// Waits for a permit (first come, first served); pair with `release()` on every path.
    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Hands the permit to the next waiter, or frees it.
    func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}
