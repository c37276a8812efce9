import Foundation
import Synchronization

/// A bounded, thread-safe table of entries that expire, for state keyed by what strangers send
/// (addresses, token hashes): an expired entry reads as absent; past `capacity`, a new key first
/// drops the expired entries, and if that is not enough, clears the table, forgiving everyone
/// rather than growing. Shared by the rate limiter and the rejected-token cache.
final class ExpiringTable<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// An entry and the time (seconds since 1970) it stops counting.
    struct Entry: Sendable {
        var value: Value
        var expires: TimeInterval
    }

    private let entries = Mutex<[Key: Entry]>([:])
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Runs `body` on `key`'s unexpired entry (`nil` when absent or expired) and stores what it
    /// leaves there (`nil` removes it), atomically.
    func update<Result: Sendable>(
        _ key: Key, now: TimeInterval, _ body: (inout Entry?) -> Result
    ) -> Result {
        entries.withLock { entries in
            var entry = entries[key].flatMap { $0.expires > now ? $0 : nil }
            let result = body(&entry)
            if let entry {
                if entries[key] == nil, entries.count >= capacity {
                    entries = entries.filter { $0.value.expires > now }
                    if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                }
                entries[key] = entry
            } else {
                entries[key] = nil
            }
            return result
        }
    }

    /// Entries held now, expired ones included (tests).
    var count: Int { entries.withLock { $0.count } }
}
