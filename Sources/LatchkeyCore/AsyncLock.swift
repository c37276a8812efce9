/// A lock for async code: one holder at a time, waiters served in arrival order.
///
/// An actor alone is not enough: it is re-entered at every `await`, so a refresh that awaits the
/// network inside it would let a second refresh start with the same single-use refresh token.
actor AsyncLock {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` alone among the callers of this lock.
    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await acquire()
        do {
            let value = try await body()
            release()
            return value
        } catch {
            release()
            throw error
        }
    }

    private func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    private func release() {
        if waiters.isEmpty {
            held = false
        } else {
            // The lock passes straight to the next waiter; `held` stays true.
            waiters.removeFirst().resume()
        }
    }
}
