import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI

/// The abuse limits of one server: which rule applies where, who the client is, and the 429
/// when a limit is reached. Defaults are far above what a real app does (a person signs in a few
/// times a month; an app refreshes every quarter of an hour) and reached by a script in seconds.
struct AbuseLimits: Sendable {
    let rules: AbuseLimitRules
    let limiter: any RateLimiter
    let trustedProxies: [ClientAddress.Network]
    let forwardedHeader: ClientAddress.ForwardedHeader
    let clock: @Sendable () -> Date
    /// Facebook's reported usage: near the app's Graph limit, limits on what spends Graph calls
    /// shrink.
    let facebookUsage: FacebookUsageMonitor
    /// The sampled log line of refusals; none in tests that build limits alone.
    var refusals: RefusalLog? = nil

    /// How much limits on what spends Graph calls shrink while Facebook reports the app's usage
    /// past `LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT`.
    static let tightenedDivisor = 4

    /// Easy Login's authorize limit as it applies now: every start leads to Graph calls, so while
    /// usage is tightened it shrinks to a quarter in the same bucket (what a client already spent
    /// still counts).
    var authorizeRule: RateRule? {
        facebookUsage.isTightened ? Self.quartered(rules.authorizePerAddress) : rules.authorizePerAddress
    }

    /// While usage is tightened, a classic sign-in (two Graph calls) also counts in buckets of a
    /// quarter of the per-address and per-/48 limits. Separate buckets, because a Limited Login
    /// sign-in costs no Graph call and keeps the full limit, and the kind is known only once the
    /// body is read, after the head was counted.
    func enforceClassicSignIn(_ address: ClientAddress?) async throws {
        guard facebookUsage.isTightened else { return }
        try await enforceSignIn(address) { Self.quartered($0, bucket: "-tightened") }
    }

    /// `rule` with a quarter of its limit (at least one), its name extended by `bucket`.
    private static func quartered(_ rule: RateRule?, bucket: String = "") -> RateRule? {
        rule.map { RateRule(name: $0.name + bucket, limit: max(1, $0.limit / tightenedDivisor), period: $0.period) }
    }

    /// The key of the request's client (`unknown` when the peer has no IP address, as in
    /// in-memory tests).
    func client(_ request: Request, _ context: LatchkeyRequestContext) -> String {
        address(request, context)?.key ?? "unknown"
    }

    /// The request's client address, forwarding headers read as configured.
    func address(_ request: Request, _ context: LatchkeyRequestContext) -> ClientAddress? {
        ClientAddress.of(
            peer: context.remoteAddress?.ipAddress, headers: request.headers, trusted: trustedProxies,
            header: forwardedHeader)
    }

    /// The request's client as a session or an audit event records it: the address (forwarding
    /// headers read as configured) and the user agent.
    func clientInfo(_ request: Request, _ context: LatchkeyRequestContext) -> ClientInfo {
        ClientInfo(address: address(request, context)?.text, userAgent: request.headers[.userAgent])
    }

    /// Counts a sign-in for the client's address and, for IPv6, for its /48.
    /// - Returns: the client's address, for `enforceClassicSignIn`.
    func enforceSignIn(_ request: Request, _ context: LatchkeyRequestContext) async throws -> ClientAddress? {
        let address = address(request, context)
        try await enforceSignIn(address) { $0 }
        return address
    }

    /// Counts a sign-in of `address` under the per-address and (IPv6) per-/48 rules, as `rule`
    /// makes them.
    private func enforceSignIn(_ address: ClientAddress?, _ rule: (RateRule?) -> RateRule?) async throws {
        try await enforce(rule(rules.signInPerAddress), key: address?.key ?? "unknown")
        if let network = address?.networkKey { try await enforce(rule(rules.signInPerNetwork), key: network) }
    }

    /// Counts an unauthenticated callback for the client's address under `rule` (a provider's
    /// server callback by default; the status page passes the browsers' rule) and, for IPv6, for
    /// its /48 at five times the per-address rule (as sign-ins' defaults relate), so one network
    /// cannot spread a flood over its /64s.
    /// - Returns: the client's address.
    func enforceCallback(
        _ request: Request, _ context: LatchkeyRequestContext, rule: KeyPath<AbuseLimitRules, RateRule?>? = nil
    ) async throws -> ClientAddress? {
        let address = address(request, context)
        let chosen = rules[keyPath: rule ?? \.providerCallbackPerAddress]
        try await enforce(chosen, key: address?.key ?? "unknown")
        if let network = address?.networkKey, let chosen {
            try await enforce(
                RateRule(name: chosen.name + "-network", limit: chosen.limit * 5, period: chosen.period), key: network)
        }
        return address
    }

    /// Counts one event for `key` under `rule`.
    /// - Throws: 429 `rate_limited` with `Retry-After` when the limit is reached.
    func enforce(_ rule: RateRule?, key: String) async throws {
        guard let rule, let wait = await limiter.acquire(key, rule: rule, now: clock()) else { return }
        // A custom limiter might answer nonsense; the header stays a sane number of seconds.
        let seconds = wait.isFinite ? min(max(1, wait.rounded(.up)), 86_400) : 60
        refusals?.refused(rule, retryAfter: Int(seconds), now: clock())
        throw APIError(
            .tooManyRequests, .rateLimited, "Too many requests; try again in a moment.", retryAfter: Int(seconds))
    }

    /// Gives back the event `enforce` counted for `key`, when what it admitted turned out not to
    /// happen (a replayed id token): otherwise a stranger replaying someone's spent token could use
    /// up that person's sign-ins.
    func refund(_ rule: RateRule?, key: String) async {
        guard let rule else { return }
        await limiter.refund(key, rule: rule, now: clock())
    }
}
