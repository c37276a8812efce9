import Foundation
import Synchronization

/// What a store reports of its own work, for `/metrics`: how long each operation took, and how many
/// transactions each SQLite commit carried.
package protocol StoreObserver: Sendable {
    /// A store operation ended after `duration` (`failed`: with an error).
    func databaseOperation(_ name: String, duration: Duration, failed: Bool)
    /// SQLite committed `transactions` callers' transactions at once (`SQLiteDatabase`'s group
    /// commit).
    func groupCommit(transactions: Int)
}

/// A store's link to its observer, attached by `buildApplication` once the server's metrics exist
/// (a store is opened before them, and CLI commands open one with no metrics at all).
///
/// Why a lock read per operation rather than an observer given at `init`: stores are opened by
/// the CLI before it knows whether a server will run; the lock is never contended (written once)
/// and costs tens of nanoseconds beside an operation's tens of microseconds.
package final class StoreObservation: Sendable {
    private let observer = Mutex<(any StoreObserver)?>(nil)

    package init() {}

    /// Reports to `observer` from now on.
    package func attach(_ observer: any StoreObserver) {
        self.observer.withLock { $0 = observer }
    }

    /// Runs `body` as the operation `name`, reporting how long it took and whether it failed.
    package func timed<T>(_ name: String, _ body: () async throws -> T) async throws -> T {
        guard let observer = observer.withLock({ $0 }) else { return try await body() }
        let start = ContinuousClock.now
        do {
            let result = try await body()
            observer.databaseOperation(name, duration: ContinuousClock.now - start, failed: false)
            return result
        } catch {
            observer.databaseOperation(name, duration: ContinuousClock.now - start, failed: true)
            throw error
        }
    }

    /// Reports a group commit of `transactions`.
    package func groupCommit(transactions: Int) {
        observer.withLock { $0 }?.groupCommit(transactions: transactions)
    }
}
