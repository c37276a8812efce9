import Foundation
import LatchkeyAPI

/// What a Graph call presented that names whom it is charged to: its access token (a user token,
/// an app token, or `APPID|SECRET`) or, on the token endpoint, its `client_id`.
struct CallerHint: Sendable {
    let token: String?
    let clientID: String?
}

extension EmulatorState {
    /// The app (and person) a call is charged to, or `nil` when it names no app the emulator knows:
    /// a made-up token spends nobody's budget.
    func usageSubject(_ hint: CallerHint) -> UsageSubject? {
        if let token = hint.token {
            if let record = tokens[token] {
                return apps[record.appID] == nil ? nil : UsageSubject(appID: record.appID, personKey: record.personKey)
            }
            // A literal `APPID|SECRET`, charged only with the right secret.
            guard case .success(.app(let app)) = validate(token: token) else { return nil }
            return UsageSubject(appID: app.id, personKey: nil)
        }
        if let clientID = hint.clientID, apps[clientID] != nil { return UsageSubject(appID: clientID, personKey: nil) }
        return nil
    }

    /// The app's limits: as set through the control API, else from the seed.
    func usageLimits(of appID: String) -> UsageLimits? {
        if let limits = usageLimits[appID] { return limits }
        return apps[appID].map { UsageLimits(dailyActiveUsers: $0.dailyActiveUsers) }
    }

    /// Charges one call to `subject` when `count` is true (a faulted call is not charged), and
    /// says what to report and whether Facebook would throttle it instead. Throttled calls are not
    /// counted, so usage falls as the hour rolls on, as Facebook's does.
    func charge(_ subject: UsageSubject?, count: Bool) -> UsageDecision {
        guard let subject, let limits = usageLimits(of: subject.appID) else { return .untracked }
        let now = now()
        var window = appCalls[subject.appID] ?? CallWindow()
        var calls = window.total(at: now)
        func report(_ calls: Int) -> UsagePercentages? {
            calls >= limits.headersAfterCalls || limits.pinned != .zero ? limits.usage(calls: calls) : nil
        }
        guard count else { return UsageDecision(usage: report(calls), throttle: nil) }
        if limits.usage(calls: calls).isSpent {
            return UsageDecision(usage: report(calls), throttle: .applicationLimit)
        }
        if let personKey = subject.personKey, let userLimit = limits.userHourlyLimit {
            let key = GrantKey(appID: subject.appID, personKey: personKey)
            var personal = personCalls[key] ?? CallWindow()
            if personal.total(at: now) >= userLimit {
                return UsageDecision(usage: report(calls), throttle: .userLimit)
            }
            personal.add(at: now)
            personCalls[key] = personal
        }
        window.add(at: now)
        appCalls[subject.appID] = window
        calls += 1
        return UsageDecision(usage: report(calls), throttle: nil)
    }

    /// Changes an app's limits (`POST /_emulator/usage`); `nil` for an unknown app.
    func setUsageLimits(appID: String, _ change: (inout UsageLimits) -> Void) -> UsageLimits? {
        guard var limits = usageLimits(of: appID) else { return nil }
        change(&limits)
        usageLimits[appID] = limits
        return limits
    }

    /// Forgets every call counted and every pinned percentage (`DELETE /_emulator/usage`).
    func resetUsage() {
        appCalls = [:]
        personCalls = [:]
        for appID in usageLimits.keys { usageLimits[appID]?.pinned = .zero }
    }

    /// Each app's limits, calls in the last hour and current usage, for `GET /_emulator/usage`.
    func usageReport() -> [(appID: String, limits: UsageLimits, calls: Int)] {
        let now = now()
        return appOrder.compactMap { appID in
            usageLimits(of: appID).map { (appID, $0, appCalls[appID]?.total(at: now) ?? 0) }
        }
    }
}
