import Foundation
import LatchkeyAPI

/// Graph's platform rate limit for one app, as Facebook describes it: an app may make about 200
/// calls per daily active user in a rolling hour, usage is reported in `X-App-Usage` as
/// percentages of that budget, and once any percentage reaches 100 calls fail with code 4
/// ("Application request limit reached") until the hour's count drops below the limit
/// (developers.facebook.com/docs/graph-api/overview/rate-limiting). A per-person limit (code 17)
/// exists but Facebook publishes no figure, so it is off unless a test sets one.
public struct UsageLimits: Sendable, Equatable {
    /// Facebook's per-user share of the hourly app budget.
    public static let callsPerUserPerHour = 200

    /// Daily active users; the hourly budget is 200 × this.
    public var dailyActiveUsers: Int
    /// Calls one person's token may make per hour in this app before code 17; `nil` for none.
    public var userHourlyLimit: Int?
    /// Calls in the hour before `X-App-Usage` appears ("once enough calls have been made").
    public var headersAfterCalls: Int
    /// Floors for the reported percentages, so a test can stand an app at 85 % CPU without making
    /// thousands of calls. The emulator measures no CPU or time of its own: both follow the call
    /// count unless pinned here.
    public var pinned: UsagePercentages

    /// Creates limits.
    public init(
        dailyActiveUsers: Int, userHourlyLimit: Int? = nil, headersAfterCalls: Int = 1,
        pinned: UsagePercentages = .zero
    ) {
        self.dailyActiveUsers = dailyActiveUsers
        self.userHourlyLimit = userHourlyLimit
        self.headersAfterCalls = headersAfterCalls
        self.pinned = pinned
    }

    /// Calls allowed per rolling hour.
    public var hourlyBudget: Int { Self.callsPerUserPerHour * max(1, dailyActiveUsers) }

    /// The usage `calls` in the last hour amount to.
    func usage(calls: Int) -> UsagePercentages {
        let share = Int((Double(calls) * 100 / Double(hourlyBudget)).rounded(.down))
        return UsagePercentages(
            callCount: max(share, pinned.callCount), totalCPUTime: max(share, pinned.totalCPUTime),
            totalTime: max(share, pinned.totalTime))
    }
}

/// The three numbers of `X-App-Usage`, each a percentage of the app's hourly allowance.
public struct UsagePercentages: Sendable, Equatable {
    /// Share of the call budget used.
    public var callCount: Int
    /// Share of the CPU-time budget used.
    public var totalCPUTime: Int
    /// Share of the total-time budget used.
    public var totalTime: Int

    /// Nothing used.
    public static let zero = UsagePercentages(callCount: 0, totalCPUTime: 0, totalTime: 0)

    /// Creates percentages.
    public init(callCount: Int, totalCPUTime: Int, totalTime: Int) {
        self.callCount = callCount
        self.totalCPUTime = totalCPUTime
        self.totalTime = totalTime
    }

    /// Whether any allowance is spent: Facebook throttles when one of the three reaches 100.
    var isSpent: Bool { max(callCount, totalCPUTime, totalTime) >= 100 }

    /// `{"call_count":N,"total_cputime":N,"total_time":N}`, the header's JSON.
    var json: JSONValue {
        ["call_count": .int(callCount), "total_cputime": .int(totalCPUTime), "total_time": .int(totalTime)]
    }

    /// The `X-App-Usage` header value.
    var headerValue: String { String(decoding: json.encoded(), as: UTF8.self) }
}

/// Calls in a rolling hour, counted per minute so an app making millions of calls keeps at most
/// 60 numbers.
struct CallWindow: Sendable {
    private var perMinute: [Int: Int] = [:]

    private static func minute(_ date: Date) -> Int { Int((date.timeIntervalSince1970 / 60).rounded(.down)) }

    /// Calls in the hour up to `now`.
    func total(at now: Date) -> Int {
        let current = Self.minute(now)
        return perMinute.reduce(0) { sum, entry in
            entry.key > current - 60 && entry.key <= current ? sum + entry.value : sum
        }
    }

    /// Counts one call at `now`, forgetting minutes that left the window.
    mutating func add(at now: Date) {
        let current = Self.minute(now)
        perMinute[current, default: 0] += 1
        if perMinute.count > 61 { perMinute = perMinute.filter { $0.key > current - 60 && $0.key <= current } }
    }
}

/// Who a Graph call is charged to: the app of its token or `client_id`, and the person whose token
/// it carried.
struct UsageSubject: Sendable, Hashable {
    let appID: String
    let personKey: String?
}

/// The outcome of charging a call: the usage to report (nil before enough calls) and, when an
/// allowance is spent, Facebook's throttling error instead of the answer.
struct UsageDecision: Sendable {
    var usage: UsagePercentages?
    var throttle: GraphError?

    static let untracked = UsageDecision(usage: nil, throttle: nil)
}
