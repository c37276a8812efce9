/// The abuse limits, each `nil` when switched off (`LATCHKEY_LIMIT_…` settings). Defaults are far
/// above what a real app does (a person signs in a few times a month; an app refreshes every
/// quarter of an hour) and are reached by a script in seconds.
package struct AbuseLimitRules: Sendable, Equatable {
    /// `POST /v1/auth/facebook` per client address (`LATCHKEY_LIMIT_SIGN_IN_PER_ADDRESS`, 60/60):
    /// each classic attempt spends two Graph calls of the app's Facebook rate limit.
    package var signInPerAddress: RateRule? = RateRule(name: "sign-in-address", limit: 60, period: 60)
    /// `POST /v1/auth/facebook` per IPv6 /48 (`LATCHKEY_LIMIT_SIGN_IN_PER_NETWORK`, 300/60): one
    /// site's /48 holds 65,536 /64s, each with its own per-address count.
    package var signInPerNetwork: RateRule? = RateRule(name: "sign-in-network", limit: 300, period: 60)
    /// Sign-ins of one Facebook identity on every path: classic, Limited Login, Easy Login
    /// (`LATCHKEY_LIMIT_SIGN_IN_PER_IDENTITY`, 10/60).
    package var signInPerIdentity: RateRule? = RateRule(name: "sign-in-identity", limit: 10, period: 60)
    /// Failed grants at `POST /v1/oauth/token` per client address (`LATCHKEY_LIMIT_TOKEN_PER_ADDRESS`,
    /// 120/60). A successful grant gives its count back, so thousands of people behind one carrier
    /// NAT refreshing on schedule never share a budget; guessing codes and tokens does.
    package var tokenPerAddress: RateRule? = RateRule(name: "token-address", limit: 120, period: 60)
    /// Refreshes of one session, its refresh-token family (`LATCHKEY_LIMIT_REFRESH_PER_SESSION`,
    /// 20/60): an app refreshes every quarter of an hour; a loop would grow the family's spent
    /// tokens (kept for reuse detection) without end, and a thief racing the app for a stolen
    /// token gets no more turns than the app.
    package var refreshPerSession: RateRule? = RateRule(name: "refresh-session", limit: 20, period: 60)
    /// `POST /v1/auth/nonce` per client address, each writing a row (`LATCHKEY_LIMIT_NONCE_PER_ADDRESS`, 60/60).
    package var noncePerAddress: RateRule? = RateRule(name: "nonce-address", limit: 60, period: 60)
    /// `GET /v1/oauth/authorize` per client address, each parking a request
    /// (`LATCHKEY_LIMIT_AUTHORIZE_PER_ADDRESS`, 30/60).
    package var authorizePerAddress: RateRule? = RateRule(name: "authorize-address", limit: 30, period: 60)
    /// Easy Login's Facebook callback per client address (`LATCHKEY_LIMIT_CALLBACK_PER_ADDRESS`,
    /// 60/60): each arrival may write a state's single use (or, for an earlier release's handle,
    /// look up the database) before anything else is known; a person comes back once per start.
    package var callbackPerAddress: RateRule? = RateRule(name: "callback-address", limit: 60, period: 60)
    /// Facebook's deauthorize and data-deletion callbacks and Apple's notifications per client
    /// address (`LATCHKEY_LIMIT_PROVIDER_CALLBACK_PER_ADDRESS`, 600/60): a provider calls from a few
    /// addresses, in bursts, and may not retry what was refused, so it gets a budget of its own,
    /// apart from strangers' browsers; only a valid signature changes anything, and each refusal
    /// is an audit row, which the limit bounds.
    package var providerCallbackPerAddress: RateRule? = RateRule(
        name: "provider-callback-address", limit: 600, period: 60)

    /// Admin API calls with a wrong or no admin key per client address
    /// (`LATCHKEY_LIMIT_ADMIN_PER_ADDRESS`, 30/60): a good key gives its count back, so only
    /// guessing is limited.
    package var adminPerAddress: RateRule? = RateRule(name: "admin-address", limit: 30, period: 60)

    /// The defaults.
    package init() {}

    /// Every limit off (benchmarks, or a deployment that limits in front of Latchkey).
    package static var off: AbuseLimitRules {
        var rules = AbuseLimitRules()
        for limit in settings { rules[keyPath: limit.keyPath] = nil }
        return rules
    }

    /// Each setting's name and the rule's name, for parsing.
    static var settings:
        [(setting: String, rule: String, keyPath: any WritableKeyPath<AbuseLimitRules, RateRule?> & Sendable)]
    {
        [
            ("LATCHKEY_LIMIT_SIGN_IN_PER_ADDRESS", "sign-in-address", \.signInPerAddress),
            ("LATCHKEY_LIMIT_SIGN_IN_PER_NETWORK", "sign-in-network", \.signInPerNetwork),
            ("LATCHKEY_LIMIT_SIGN_IN_PER_IDENTITY", "sign-in-identity", \.signInPerIdentity),
            ("LATCHKEY_LIMIT_TOKEN_PER_ADDRESS", "token-address", \.tokenPerAddress),
            ("LATCHKEY_LIMIT_REFRESH_PER_SESSION", "refresh-session", \.refreshPerSession),
            ("LATCHKEY_LIMIT_NONCE_PER_ADDRESS", "nonce-address", \.noncePerAddress),
            ("LATCHKEY_LIMIT_AUTHORIZE_PER_ADDRESS", "authorize-address", \.authorizePerAddress),
            ("LATCHKEY_LIMIT_CALLBACK_PER_ADDRESS", "callback-address", \.callbackPerAddress),
            (
                "LATCHKEY_LIMIT_PROVIDER_CALLBACK_PER_ADDRESS", "provider-callback-address",
                \.providerCallbackPerAddress
            ),
            ("LATCHKEY_LIMIT_ADMIN_PER_ADDRESS", "admin-address", \.adminPerAddress),
        ]
    }
}
