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

    /// What is known of one app's usage. Reports are merged rather than replaced: a sign-in's
    /// concurrent calls answer in either order, and only some answers carry each header, so the
    /// last answer alone would make the level flap and drop a business-use-case figure. Within a
    /// window of `mergeWindow` the highest figure of each kind is kept; a report after the window
    /// starts a new one, so usage that really falls is seen within a minute.
    private struct Entry {
        /// `X-App-Usage`'s figures (the highest in the current window) and when that window began.
        var app: FacebookUsage?
        var appSince: Date?
        /// The highest `X-Business-Use-Case-Usage` figure of its current window, and its start.
        var business: Int?
        var businessSince: Date?
        /// The last code-4 answer: the allowance is spent for a window whatever the headers say.
        var throttledAt: Date?
        /// The last report of any kind.
        var observedAt: Date
        var level: Level = .normal
        /// When the current elevated level was last logged.
        var loggedAt: Date?

        /// The figures as `/ready` shows them.
        var usage: FacebookUsage {
            FacebookUsage(
                callCount: app?.callCount, totalCPUTime: app?.totalCPUTime, totalTime: app?.totalTime,
                businessUseCase: business)
        }

        /// The highest figure that still counts at `now`.
        func highest(at now: Date) -> Int {
            var figures = [app?.highest ?? 0]
            if let business, let since = businessSince, now.timeIntervalSince(since) < FacebookUsageMonitor.staleAfter {
                figures.append(business)
            }
            if let throttledAt, now.timeIntervalSince(throttledAt) < FacebookUsageMonitor.mergeWindow {
                figures.append(100)
            }
            return figures.max() ?? 0
        }
    }

    /// Facebook's window is a rolling hour: an older report says nothing about now.
    static let staleAfter: TimeInterval = 3600
    /// Reports within this long of a window's start are merged, keeping each figure's highest.
    static let mergeWindow: TimeInterval = 60
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

    private func level(of highest: Int) -> Level {
        highest >= tightenPercent ? .tightened : highest >= warningPercent ? .warning : .normal
    }

    /// Records what an answer's headers said about `appID`'s usage.
    func record(_ usage: FacebookUsage, appID: String) {
        update(appID) { entry, now in
            if usage.callCount != nil || usage.totalCPUTime != nil || usage.totalTime != nil {
                var figures = FacebookUsage(
                    callCount: usage.callCount, totalCPUTime: usage.totalCPUTime, totalTime: usage.totalTime)
                if let kept = entry.app, let since = entry.appSince, now.timeIntervalSince(since) < Self.mergeWindow {
                    figures.callCount = Self.larger(kept.callCount, figures.callCount)
                    figures.totalCPUTime = Self.larger(kept.totalCPUTime, figures.totalCPUTime)
                    figures.totalTime = Self.larger(kept.totalTime, figures.totalTime)
                } else {
                    entry.appSince = now
                }
                entry.app = figures
            }
            if let business = usage.businessUseCase {
                if let kept = entry.business, let since = entry.businessSince,
                    now.timeIntervalSince(since) < Self.mergeWindow
                {
                    entry.business = max(kept, business)
                } else {
                    entry.business = business
                    entry.businessSince = now
                }
            }
        }
    }

    /// Facebook answered code 4 (the app's limit): its allowance is spent whether or not the
    /// answer carried usage headers.
    func recordThrottle(appID: String) {
        update(appID) { entry, now in entry.throttledAt = now }
    }

    private static func larger(_ first: Int?, _ second: Int?) -> Int? {
        switch (first, second) {
        case (let first?, let second?): max(first, second)
        default: first ?? second
        }
    }

    /// Applies `change` to `appID`'s entry and works out the new level, in one locked step (a
    /// report landing in between cannot be lost); logs outside the lock.
    private func update(_ appID: String, _ change: (inout Entry, Date) -> Void) {
        let now = clock()
        let (previous, current, usage, shouldLog) = entries.withLock { entries in
            var entry = entries[appID] ?? Entry(observedAt: now)
            let previous =
                now.timeIntervalSince(entry.observedAt) < Self.staleAfter ? entry.level : Level.normal
            change(&entry, now)
            entry.observedAt = now
            entry.level = level(of: entry.highest(at: now))
            let repeatDue = entry.loggedAt.map { now.timeIntervalSince($0) >= Self.repeatWarningAfter } ?? true
            let shouldLog = entry.level != previous || (entry.level != .normal && repeatDue)
            if shouldLog { entry.loggedAt = now }
            entries[appID] = entry
            return (previous, entry.level, entry.usage, shouldLog)
        }
        guard shouldLog else { return }
        var metadata: Logger.Metadata = [
            "latchkey.facebook.app": "\(appID)", "latchkey.facebook.usage": "\(usage.json)",
            "latchkey.facebook.usage_level": "\(current.rawValue)",
        ]
        switch current {
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
            if let throttledAt = entry.throttledAt {
                members["throttled_at"] = .int(Int(throttledAt.timeIntervalSince1970))
            }
            let stale = now.timeIntervalSince(entry.observedAt) >= Self.staleAfter
            members["level"] = .string(stale ? Level.normal.rawValue : entry.level.rawValue)
            members["observed_at"] = .int(Int(entry.observedAt.timeIntervalSince1970))
            if stale { members["stale"] = true }
            apps[appID] = .object(members)
        }
        return .object(apps)
    }
}
