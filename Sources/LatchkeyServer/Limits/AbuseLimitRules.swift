/// The abuse limits, each `nil` when switched off (`LATCHKEY_LIMIT_…` settings). Defaults are far
/// above what a real app does (a person signs in a few times a month; an app refreshes every
/// quarter of an hour) and are reached by a script in seconds.
public struct AbuseLimitRules: Sendable, Equatable {
    /// `POST /v1/auth/facebook` per client address (`LATCHKEY_LIMIT_SIGN_IN_PER_ADDRESS`, 60/60):
    /// each classic attempt spends two Graph calls of the app's Facebook rate limit.
    public var signInPerAddress: RateRule? = RateRule(name: "sign-in-address", limit: 60, period: 60)
    /// Sign-ins of one Facebook identity on every path: classic, Limited Login, Easy Login
    /// (`LATCHKEY_LIMIT_SIGN_IN_PER_IDENTITY`, 10/60).
    public var signInPerIdentity: RateRule? = RateRule(name: "sign-in-identity", limit: 10, period: 60)
    /// `POST /v1/oauth/token`, both grants, per client address (`LATCHKEY_LIMIT_TOKEN_PER_ADDRESS`, 120/60).
    public var tokenPerAddress: RateRule? = RateRule(name: "token-address", limit: 120, period: 60)
    /// `POST /v1/auth/nonce` per client address, each writing a row (`LATCHKEY_LIMIT_NONCE_PER_ADDRESS`, 60/60).
    public var noncePerAddress: RateRule? = RateRule(name: "nonce-address", limit: 60, period: 60)
    /// `GET /v1/oauth/authorize` per client address, each parking a request
    /// (`LATCHKEY_LIMIT_AUTHORIZE_PER_ADDRESS`, 30/60).
    public var authorizePerAddress: RateRule? = RateRule(name: "authorize-address", limit: 30, period: 60)

    /// The defaults.
    public init() {}

    /// Every limit off (benchmarks, or a deployment that limits in front of Latchkey).
    public static var off: AbuseLimitRules {
        var rules = AbuseLimitRules()
        for limit in settings { rules[keyPath: limit.keyPath] = nil }
        return rules
    }

    /// Each setting's name and the rule's name, for parsing.
    static var settings: [(setting: String, rule: String, keyPath: WritableKeyPath<AbuseLimitRules, RateRule?>)] {
        [
            ("LATCHKEY_LIMIT_SIGN_IN_PER_ADDRESS", "sign-in-address", \.signInPerAddress),
            ("LATCHKEY_LIMIT_SIGN_IN_PER_IDENTITY", "sign-in-identity", \.signInPerIdentity),
            ("LATCHKEY_LIMIT_TOKEN_PER_ADDRESS", "token-address", \.tokenPerAddress),
            ("LATCHKEY_LIMIT_NONCE_PER_ADDRESS", "nonce-address", \.noncePerAddress),
            ("LATCHKEY_LIMIT_AUTHORIZE_PER_ADDRESS", "authorize-address", \.authorizePerAddress),
        ]
    }
}
