import Foundation

/// The limiter of one server process: GCRA with one number per key (the "theoretical arrival
/// time" of the next event), in a bounded table.
///
/// Keys come from strangers (IP addresses), so the table is bounded: past `maximumKeys`, keys
/// whose bucket is full again (their arrival time has passed, exactly as if absent) are dropped;
/// if that is not enough, the table is cleared, which forgives everyone rather than grow.
package final class InProcessRateLimiter: RateLimiter {
    /// Per rule and key, the arrival time of the next event; the entry expires then (a full
    /// bucket is the same as none).
    private let buckets: ExpiringTable<String, Void>

    /// - Parameter maximumKeys: the most keys remembered at once.
    package init(maximumKeys: Int = 100_000) { buckets = ExpiringTable(capacity: maximumKeys) }

    /// See `RateLimiter.acquire`.
    package func acquire(_ key: String, rule: RateRule, now: Date) async -> TimeInterval? {
        let interval = rule.period / Double(rule.limit)
        let tolerance = rule.period - interval
        let time = now.timeIntervalSince1970
        return buckets.update(rule.name + "|" + key, now: time) { bucket -> TimeInterval? in
            let arrival = max(bucket?.expires ?? time, time)
            if arrival - time > tolerance { return arrival - tolerance - time }
            bucket = .init(value: (), expires: arrival + interval)
            return nil
        }
    }

    /// See `RateLimiter.refund`.
    package func refund(_ key: String, rule: RateRule, now: Date) async {
        let interval = rule.period / Double(rule.limit)
        buckets.update(rule.name + "|" + key, now: now.timeIntervalSince1970) { bucket in
            bucket?.expires -= interval
        }
    }

    /// Keys remembered now (tests).
    var count: Int { buckets.count }
}
