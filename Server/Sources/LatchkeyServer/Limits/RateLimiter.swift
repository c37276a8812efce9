import Foundation

/// Where abuse limits keep their counts. One small protocol, so a shared implementation (for many
/// nodes on one database) can replace the in-process one without touching the routes.
package protocol RateLimiter: Sendable {
    /// Counts one event for `key` under `rule` at `now`.
    /// - Returns: `nil` when allowed; otherwise the seconds to wait before the next one is.
    func acquire(_ key: String, rule: RateRule, now: Date) async -> TimeInterval?

    /// Takes back one event counted for `key` under `rule` (it did not happen after all).
    func refund(_ key: String, rule: RateRule, now: Date) async
}

/// At most `limit` events in any `period` seconds, in a burst or spread out (GCRA, the generic
/// cell-rate algorithm: a token bucket of `limit` tokens refilled at `limit / period` a second).
package struct RateRule: Sendable, Equatable, CustomStringConvertible {
    /// The limit's name, part of every key, so rules never share counts.
    package var name: String
    /// Events allowed per `period`.
    package var limit: Int
    /// Seconds.
    package var period: TimeInterval

    /// Creates a rule.
    package init(name: String, limit: Int, period: TimeInterval) {
        self.name = name
        self.limit = limit
        self.period = period
    }

    /// `limit/period`, as settings write it.
    package var description: String { "\(limit)/\(Int(period))" }

    /// Parses `N/SECONDS` (`60/60`: sixty a minute); `off` or `0` disables the rule (`nil`).
    /// - Throws: `ConfigurationError` naming `setting`.
    static func parse(_ text: String, name: String, setting: String) throws -> RateRule? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed == "off" || trimmed == "0" { return nil }
        let parts = trimmed.split(separator: "/").map(String.init)
        // At least a microsecond between events: finer, and the arithmetic on epoch seconds (about
        // 2e-7 s of precision) would never count anything.
        guard parts.count == 2, let limit = Int(parts[0]), limit > 0, let period = TimeInterval(parts[1]),
            period > 0, period <= 86_400, period / Double(limit) >= 1e-6
        else {
            throw ConfigurationError("\(setting) must be N/SECONDS (for example 60/60) or off")
        }
        return RateRule(name: name, limit: limit, period: period)
    }
}
