import Foundation
import LatchkeyAPI
import Logging
import Synchronization

/// The last Graph usage Facebook reported for each app, and what Latchkey does about it: a
/// warning in the log past `LATCHKEY_FACEBOOK_USAGE_WARN_PERCENT` (80 by default) and, past
/// `LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT` (95), tighter limits of its own, so a spike of
/// made-up tokens cannot push the app into Facebook's throttle, where every real sign-in fails
/// for up to an hour. Shown by `/ready`.
final class FacebookUsageMonitor: Sendable {
    /// What the usage calls for.
    enum Level: String, Sendable, Comparable {
        case normal
        /// Past the warning threshold: logged.
        case warning
        /// Past the second threshold: rejected tokens are remembered longer, app-shaped tokens are
        /// refused locally, and per-address sign-in limits shrink.
        case tightened

        private var rank: Int {
            switch self {
            case .normal: 0
            case .warning: 1
            case .tightened: 2
            }
        }

        static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    private struct Entry {
        var usage: FacebookUsage
        var observedAt: Date
        var level: Level
        /// When the current elevated level was last logged.
        var loggedAt: Date
    }

    /// Facebook's window is a rolling hour: an older report says nothing about now.
    static let staleAfter: TimeInterval = 3600
    /// While usage stays high, the warning is repeated at most this often, so a busy server logs
    /// a few lines an hour rather than one per sign-in.
    static let repeatWarningAfter: TimeInterval = 300
    /// How much per-address limits shrink when tightened.
    static let tightenedLimitDivisor = 4
    /// How long a refused token is remembered when tightened (the configured time when longer):
    /// within Facebook's hour, a replayed token costs no call however the TTL is set.
    static let tightenedRejectionLifetime: TimeInterval = 600

    let warningPercent: Int
    let tightenPercent: Int
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let entries = Mutex<[String: Entry]>([:])

    init(warningPercent: Int, tightenPercent: Int, clock: @escaping @Sendable () -> Date, logger: Logger) {
        self.warningPercent = warningPercent
        self.tightenPercent = tightenPercent
        self.clock = clock
        self.logger = logger
    }

    private func level(of usage: FacebookUsage) -> Level {
        usage.highest >= tightenPercent ? .tightened : usage.highest >= warningPercent ? .warning : .normal
    }

    /// Records what an answer's headers said about `appID`'s usage.
    func record(_ usage: FacebookUsage, appID: String) {
        let now = clock()
        let level = level(of: usage)
        let (previous, shouldLog) = entries.withLock { entries -> (Level, Bool) in
            let old = entries[appID]
            let previous = old.map { now.timeIntervalSince($0.observedAt) < Self.staleAfter ? $0.level : .normal }
            let repeatDue = old.map { now.timeIntervalSince($0.loggedAt) >= Self.repeatWarningAfter } ?? true
            let shouldLog = level != (previous ?? .normal) || (level != .normal && repeatDue)
            entries[appID] = Entry(
                usage: usage, observedAt: now, level: level,
                loggedAt: shouldLog ? now : old?.loggedAt ?? now)
            return (previous ?? .normal, shouldLog)
        }
        guard shouldLog else { return }
        var metadata: Logger.Metadata = [
            "latchkey.facebook.app": "\(appID)", "latchkey.facebook.usage": "\(usage.json)",
            "latchkey.facebook.usage_level": "\(level.rawValue)",
        ]
        switch level {
        case .normal:
            if previous != .normal { logger.notice("latchkey.facebook.usage_normal", metadata: metadata) }
        case .warning:
            metadata["latchkey.facebook.usage_threshold"] = "\(warningPercent)"
            logger.warning("latchkey.facebook.usage_high", metadata: metadata)
        case .tightened:
            metadata["latchkey.facebook.usage_threshold"] = "\(tightenPercent)"
            logger.warning("latchkey.facebook.usage_tightened", metadata: metadata)
        }
    }

    /// Facebook answered code 4 (the app's limit): its allowance is spent whether or not the
    /// answer carried usage headers.
    func recordThrottle(appID: String) {
        let reported = entries.withLock { $0[appID] }
        var usage = reported?.usage ?? FacebookUsage(spent: ())
        if usage.highest < 100 { usage.callCount = max(usage.callCount ?? 0, 100) }
        record(usage, appID: appID)
    }

    /// Whether any app's recent usage is past the second threshold.
    var isTightened: Bool {
        let now = clock()
        return entries.withLock { entries in
            entries.values.contains { $0.level == .tightened && now.timeIntervalSince($0.observedAt) < Self.staleAfter }
        }
    }

    /// `rule` as it applies now: a quarter of its limit (at least one) when tightened.
    func effective(_ rule: RateRule?) -> RateRule? {
        guard var rule, isTightened else { return rule }
        rule.limit = max(1, rule.limit / Self.tightenedLimitDivisor)
        return rule
    }

    /// What `/ready` shows: per app, the last usage, its level and when it was seen; stale reports
    /// are shown as such.
    var report: JSONValue {
        let now = clock()
        let snapshot = entries.withLock { $0 }
        var apps: [String: JSONValue] = [:]
        for (appID, entry) in snapshot {
            var members = entry.usage.json.objectValue ?? [:]
            let stale = now.timeIntervalSince(entry.observedAt) >= Self.staleAfter
            members["level"] = .string(stale ? Level.normal.rawValue : entry.level.rawValue)
            members["observed_at"] = .int(Int(entry.observedAt.timeIntervalSince1970))
            if stale { members["stale"] = true }
            apps[appID] = .object(members)
        }
        return .object(apps)
    }
}
