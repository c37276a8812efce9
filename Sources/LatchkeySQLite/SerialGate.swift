/// A FIFO async lock: SQLite work through one connection must not interleave, and an actor alone
/// does not prevent that once a method awaits.
actor SerialGate {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            busy = false
        } else {
            // Ownership passes straight to the next waiter; `busy` stays true.
            waiters.removeFirst().resume()
        }
    }
}
