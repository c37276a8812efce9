import HTTPTypes
import LatchkeyAPI
import Synchronization

/// The most Graph calls in flight at once. Facebook rate-limits the app as a whole (about 200
/// calls per daily user per hour), so a flood of made-up tokens must not queue behind the
/// connection pool and spend it: past the budget a sign-in gets a fast 503 instead of waiting.
final class FacebookCallBudget: Sendable {
    private let inFlight = Mutex(0)
    /// Calls allowed at once.
    let maximum: Int

    init(maximum: Int) { self.maximum = maximum }

    /// Takes `calls` slots at once (a classic sign-in needs its two together), or none.
    /// - Returns: whether they were taken; release them with `release(_:)`.
    func acquire(_ calls: Int) -> Bool {
        inFlight.withLock { current in
            guard current + calls <= maximum else { return false }
            current += calls
            return true
        }
    }

    /// Gives back slots taken with `acquire(_:)`.
    func release(_ calls: Int) { inFlight.withLock { $0 -= calls } }

    /// Slots in use (tests).
    var inUse: Int { inFlight.withLock { $0 } }

    /// Runs `body` holding `calls` slots.
    /// - Throws: 503 `facebook_unavailable` at once when the budget is spent.
    func spending<T: Sendable>(_ calls: Int, _ body: () async throws -> T) async throws -> T {
        guard acquire(calls) else {
            throw APIError(
                .serviceUnavailable, .facebookUnavailable, "Too many sign-ins are waiting for Facebook; try again.",
                retryAfter: 1)
        }
        defer { release(calls) }
        return try await body()
    }
}
