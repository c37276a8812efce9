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
    enum Level: String, Sendable {
        case normal
        /// Past the warning threshold: logged.
        case warning
        /// Past the second threshold: rejected tokens are remembered longer, app-shaped tokens are
        /// refused locally, and per-address sign-in limits shrink (`AbuseLimits`).
        case tightened
    }

    /// One reported figure, merged: the highest value within a window that starts with the first
    /// report after the previous window ended, so concurrent answers arriving in either order
    /// agree, and usage that really falls is seen within `mergeWindow`.
    private struct Peak {
        var value: Int?
        var since: Date?

        mutating func add(_ reported: Int?, at now: Date) {
            guard let reported else { return }
            if let value, let since, now.timeIntervalSince(since) < FacebookUsageMonitor.mergeWindow {
                self.value = max(value, reported)
            } else {
                value = reported
                since = now
            }
        }

        /// The value, unless older than Facebook's hour.
        func current(at now: Date) -> Int? {
            guard let since, now.timeIntervalSince(since) < FacebookUsageMonitor.staleAfter else { return nil }
            return value
        }
    }

    /// What is known of one app's usage. Each figure is merged on its own (`Peak`): only some
    /// answers carry each header, so the last answer alone would make the level flap and drop a
    /// business-use-case figure.
    private struct Entry {
        var callCount = Peak()
        var totalCPUTime = Peak()
        var totalTime = Peak()
        /// The highest figure of `X-Business-Use-Case-Usage`.
        var businessUseCase = Peak()
        /// The last code-4 answer: the allowance is spent for a window whatever the headers say.
        var throttledAt: Date?
        /// The last report of any kind.
        var observedAt: Date
        /// The level at the last report, to log its changes; the level now is derived
        /// (`level(at:)`), since figures and a throttle stop counting with time alone.
        var reportedLevel: Level = .normal
        /// When the current elevated level was last logged.
        var loggedAt: Date?

        /// The figures as `/ready` shows them.
        var usage: FacebookUsage {
            FacebookUsage(
                callCount: callCount.value, totalCPUTime: totalCPUTime.value, totalTime: totalTime.value,
                businessUseCase: businessUseCase.value)
        }

        /// The highest figure that still counts at `now`: Facebook throttles when any one reaches 100.
        func highest(at now: Date) -> Int {
            var figures = [callCount, totalCPUTime, totalTime, businessUseCase].compactMap { $0.current(at: now) }
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

    /// The level of `entry`'s figures that still count at `now`.
    private func level(_ entry: Entry, at now: Date) -> Level {
        let highest = entry.highest(at: now)
        return highest >= tightenPercent ? .tightened : highest >= warningPercent ? .warning : .normal
    }

    /// Records what an answer's headers said about `appID`'s usage.
    func record(_ usage: FacebookUsage, appID: String) {
        update(appID) { entry, now in
            entry.callCount.add(usage.callCount, at: now)
            entry.totalCPUTime.add(usage.totalCPUTime, at: now)
            entry.totalTime.add(usage.totalTime, at: now)
            entry.businessUseCase.add(usage.businessUseCase, at: now)
        }
    }

    /// Facebook answered code 4 (the app's limit): its allowance is spent whether or not the
    /// answer carried usage headers.
    func recordThrottle(appID: String) {
        update(appID) { entry, now in entry.throttledAt = now }
    }

    /// Applies `change` to `appID`'s entry and works out the new level, in one locked step (a
    /// report landing in between cannot be lost); logs outside the lock.
    private func update(_ appID: String, _ change: (inout Entry, Date) -> Void) {
        let now = clock()
        let (previous, current, usage, shouldLog) = entries.withLock { entries in
            var entry = entries[appID] ?? Entry(observedAt: now)
            let previous =
                now.timeIntervalSince(entry.observedAt) < Self.staleAfter ? entry.reportedLevel : Level.normal
            change(&entry, now)
            entry.observedAt = now
            entry.reportedLevel = level(entry, at: now)
            let current = entry.reportedLevel
            let repeatDue = entry.loggedAt.map { now.timeIntervalSince($0) >= Self.repeatWarningAfter } ?? true
            let shouldLog = current != previous || (current != .normal && repeatDue)
            if shouldLog { entry.loggedAt = now }
            entries[appID] = entry
            return (previous, current, entry.usage, shouldLog)
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
            entries.values.contains { level($0, at: now) == .tightened }
        }
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
            members["level"] = .string(level(entry, at: now).rawValue)
            members["observed_at"] = .int(Int(entry.observedAt.timeIntervalSince1970))
            if stale { members["stale"] = true }
            apps[appID] = .object(members)
        }
        return .object(apps)
    }
}
