import Foundation
import Synchronization

/// The limiter of one server process: GCRA with one number per key (the "theoretical arrival
/// time" of the next event), in a bounded table.
///
/// Keys come from strangers (IP addresses), so the table is bounded: past `maximumKeys`, keys
/// whose bucket is full again (their arrival time has passed, exactly as if absent) are dropped;
/// if that is not enough, the table is cleared, which forgives everyone rather than grow.
public final class InProcessRateLimiter: RateLimiter {
    private let buckets = Mutex<[String: TimeInterval]>([:])
    private let maximumKeys: Int

    /// - Parameter maximumKeys: the most keys remembered at once.
    public init(maximumKeys: Int = 100_000) { self.maximumKeys = maximumKeys }

    /// See `RateLimiter.acquire`.
    public func acquire(_ key: String, rule: RateRule, now: Date) async -> TimeInterval? {
        let interval = rule.period / Double(rule.limit)
        let tolerance = rule.period - interval
        let time = now.timeIntervalSince1970
        return buckets.withLock { buckets -> TimeInterval? in
            let fullKey = rule.name + "|" + key
            let arrival = max(buckets[fullKey] ?? time, time)
            if arrival - time > tolerance { return arrival - tolerance - time }
            if buckets.count >= maximumKeys, buckets[fullKey] == nil {
                buckets = buckets.filter { $0.value > time }
                if buckets.count >= maximumKeys { buckets.removeAll(keepingCapacity: true) }
            }
            buckets[fullKey] = arrival + interval
            return nil
        }
    }

    /// See `RateLimiter.refund`.
    public func refund(_ key: String, rule: RateRule, now: Date) async {
        let interval = rule.period / Double(rule.limit)
        let time = now.timeIntervalSince1970
        buckets.withLock { buckets in
            let fullKey = rule.name + "|" + key
            guard let arrival = buckets[fullKey] else { return }
            buckets[fullKey] = max(arrival - interval, time)
        }
    }

    /// Keys remembered now (tests).
    var count: Int { buckets.withLock { $0.count } }
}
