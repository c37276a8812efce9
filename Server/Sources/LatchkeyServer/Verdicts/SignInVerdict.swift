/// What a store found when a sign-in reached it, as far as the sign-in's refusals go.
package struct SignInFacts: Sendable, Hashable, CustomStringConvertible {
    /// The id token's `jti` was spent already, by an earlier sign-in with the same token (and its
    /// record has not expired). Always `false` for a sign-in without one (a classic token).
    package var jtiSpent: Bool
    /// A server nonce was presented, and it is unknown, expired or spent. Always `false` for a
    /// sign-in without one.
    package var nonceInvalid: Bool
    /// The identity belongs to a user already, and that user is disabled.
    package var userDisabled: Bool
    /// No user has the identity yet, and the login asked to look for the person's identity in
    /// another app of the same business first (`LoginRecord.joinsByBusiness`).
    package var newIdentity: Bool

    /// Creates the facts; each defaults to the one that lets a sign-in through.
    package init(
        jtiSpent: Bool = false, nonceInvalid: Bool = false, userDisabled: Bool = false, newIdentity: Bool = false
    ) {
        self.jtiSpent = jtiSpent
        self.nonceInvalid = nonceInvalid
        self.userDisabled = userDisabled
        self.newIdentity = newIdentity
    }

    /// Each fact's name, as the PostgreSQL statements report the facts they found (a list of the
    /// names that hold, `PostgresStore.refusal`): the SQL interpolates these, so the two cannot
    /// spell them differently.
    package enum Name: String, CaseIterable, Sendable {
        case replayed
        case nonceInvalid = "nonce_invalid"
        case disabled
        case newIdentity = "new_identity"
    }

    /// The names of the facts that hold, comma-separated.
    package var description: String {
        [
            (jtiSpent, Name.replayed), (nonceInvalid, .nonceInvalid), (userDisabled, .disabled),
            (newIdentity, .newIdentity),
        ]
        .filter(\.0).map(\.1.rawValue).joined(separator: ",")
    }

    /// Reads `description`'s form back; names it does not know (a backend's own reasons to try
    /// again) are left to the caller.
    package init(names: some Sequence<Substring>) {
        let names = Set(names.map(String.init))
        self.init(
            jtiSpent: names.contains(Name.replayed.rawValue), nonceInvalid: names.contains(Name.nonceInvalid.rawValue),
            userDisabled: names.contains(Name.disabled.rawValue), newIdentity: names.contains(Name.newIdentity.rawValue)
        )
    }
}

extension Verdicts {
    /// Whether a sign-in may proceed, or the refusal it gets. When a sign-in is refused the store
    /// writes nothing at all: the jti stays unspent, the nonce unconsumed, no session opens.
    ///
    /// The order, when several refusals apply: a replayed id token first (whoever presents a
    /// token twice learns nothing else about the account, a disabled one included), then the
    /// server nonce (the request itself is not a fresh one), and only then a disabled user, the
    /// one refusal that is about the person rather than the request. A new identity that must
    /// look for its business first comes last: only a sign-in that would otherwise go through
    /// costs a Graph call (a disabled user's identity is never new).
    package static func signIn(_ facts: SignInFacts) -> SignInConflict? {
        if facts.jtiSpent { return .replayed }
        if facts.nonceInvalid { return .nonceInvalid }
        if facts.userDisabled { return .userDisabled }
        if facts.newIdentity { return .newIdentity }
        return nil
    }
}
