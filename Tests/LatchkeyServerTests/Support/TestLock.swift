/// A lock tests take around work that must not overlap across suites, which Swift Testing runs in
/// parallel.
actor TestLock {
    private var held = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

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

    private func acquire() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty { held = false } else { waiting.removeFirst().resume() }
    }
}
