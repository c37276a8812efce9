import Foundation

/// What a store found when a link reached it (`LatchkeyStore.linkIdentity`).
package struct LinkFacts: Sendable, Hashable {
    /// Who owns the identity now.
    package enum Owner: Sendable, Hashable, CaseIterable {
        /// Nobody: the identity is new.
        case nobody
        /// The user it is being linked to.
        case caller
        /// Another user.
        case another

        /// Who `owner` (the identity's user, as read) is to `caller`.
        package init(_ owner: String?, caller: String) {
            self = owner == nil ? .nobody : owner == caller ? .caller : .another
        }
    }

    /// The id token's `jti` was spent already.
    package var jtiSpent = false
    /// A server nonce was presented and is unknown, expired or spent.
    package var nonceInvalid = false
    /// The user the identity joins exists.
    package var userExists = true
    /// That user is disabled.
    package var userDisabled = false
    /// The identity's owner.
    package var owner = Owner.nobody
    /// The user is a guest (exempt from reauthentication: it has nothing to sign in with).
    package var anonymous = false
    /// The caller's session signed in within the reauthentication window; `true` for a link
    /// without a caller's session (a sign-in that links).
    package var sessionRecent = true
    /// Who owns another identity with the link's business token (Facebook's `token_for_business`:
    /// the same person in another app of the business), for a link a caller asked for; `.nobody`
    /// without one, and for a sign-in's join by business (the join itself).
    package var businessOwner = Owner.nobody

    /// Creates the facts; each defaults to the one that lets a link through.
    package init(
        jtiSpent: Bool = false, nonceInvalid: Bool = false, userExists: Bool = true, userDisabled: Bool = false,
        owner: Owner = .nobody, anonymous: Bool = false, sessionRecent: Bool = true, businessOwner: Owner = .nobody
    ) {
        self.businessOwner = businessOwner
        self.jtiSpent = jtiSpent
        self.nonceInvalid = nonceInvalid
        self.userExists = userExists
        self.userDisabled = userDisabled
        self.owner = owner
        self.anonymous = anonymous
        self.sessionRecent = sessionRecent
    }
}

/// What a link does.
package enum LinkVerdict: Sendable, Equatable {
    /// Refused; nothing is written.
    case refuse(IdentityRefusal)
    /// Someone else owns the identity: nothing is written, the caller gets a ticket.
    case conflict
    /// Nobody owns the identity, but someone else owns the same person's identity in another app
    /// of the business: linking would split the person across two accounts, so it is the conflict
    /// it is, with a ticket naming that other identity.
    case businessConflict
    /// The caller has it already: its last sign-in is noted and the single-use values spent.
    case touch
    /// The identity is added, the properties filled, a guest made a full user.
    case link
}

/// What a store found for an unlink.
package struct UnlinkFacts: Sendable, Hashable {
    /// The user exists.
    package var userExists = true
    /// The identity is the user's.
    package var linked = true
    /// How many identities the user has, this one included.
    package var identities = 2
    /// The caller's session signed in within the reauthentication window.
    package var sessionRecent = true

    /// Creates the facts.
    package init(userExists: Bool = true, linked: Bool = true, identities: Int = 2, sessionRecent: Bool = true) {
        self.userExists = userExists
        self.linked = linked
        self.identities = identities
        self.sessionRecent = sessionRecent
    }
}

/// What a store found for a merge.
package struct MergeFacts: Sendable, Hashable {
    /// The ticket was spent already.
    package var ticketSpent = false
    /// The account the ticket was issued to still exists.
    package var sourceExists = true
    /// That account is disabled (a merge must not carry a disabled account's identities out).
    package var sourceDisabled = false
    /// The caller still owns the ticket's identity.
    package var targetOwnsIdentity = true
    /// Source and target are the same user (the identity was linked to the ticket's user since).
    package var sameUser = false
    /// The caller's session signed in within the reauthentication window.
    package var targetRecent = true

    /// Creates the facts.
    package init(
        ticketSpent: Bool = false, sourceExists: Bool = true, sourceDisabled: Bool = false,
        targetOwnsIdentity: Bool = true, sameUser: Bool = false, targetRecent: Bool = true
    ) {
        self.ticketSpent = ticketSpent
        self.sourceExists = sourceExists
        self.sourceDisabled = sourceDisabled
        self.targetOwnsIdentity = targetOwnsIdentity
        self.sameUser = sameUser
        self.targetRecent = targetRecent
    }
}

/// What a store found for an account deletion.
package struct DeletionFacts: Sendable, Hashable {
    /// The session exists, is not revoked, and belongs to the user.
    package var sessionActive = true
    /// The user is a guest (exempt from reauthentication: a guest has nothing to sign in with).
    package var anonymous = false
    /// Seconds since the session's sign-in (or its latest fresh proof of a credential).
    package var secondsSinceSignIn: TimeInterval = 0
    /// `LATCHKEY_REAUTHENTICATION_WINDOW`.
    package var window: TimeInterval = 600

    /// Creates the facts.
    package init(
        sessionActive: Bool = true, anonymous: Bool = false, secondsSinceSignIn: TimeInterval = 0,
        window: TimeInterval = 600
    ) {
        self.sessionActive = sessionActive
        self.anonymous = anonymous
        self.secondsSinceSignIn = secondsSinceSignIn
        self.window = window
    }
}

extension Verdicts {
    /// Whether a link goes through. The order: a replayed token and a stale nonce first (as for a
    /// sign-in: the request itself is not fresh), then the caller's account (gone, disabled), and
    /// only then whose the identity is, so a refused request learns nothing about the identity.
    package static func link(_ facts: LinkFacts) -> LinkVerdict {
        if facts.jtiSpent { return .refuse(.replayed) }
        if facts.nonceInvalid { return .refuse(.nonceInvalid) }
        if !facts.userExists { return .refuse(.sessionEnded) }
        if facts.userDisabled { return .refuse(.userDisabled) }
        // Adding an identity, or learning that another account has it (and getting a ticket that
        // could merge this account away), needs a recent sign-in; re-proving one the user has is
        // that sign-in.
        if facts.owner != .caller, !facts.anonymous, !facts.sessionRecent { return .refuse(.reauthenticationRequired) }
        switch facts.owner {
        case .another: return .conflict
        case .caller: return .touch
        case .nobody: return facts.businessOwner == .another ? .businessConflict : .link
        }
    }

    /// Whether an identity may be unlinked: by a session that signed in recently (an intruder
    /// must not remove the owner's way in), and never the last one (a guest has none to unlink).
    package static func unlink(_ facts: UnlinkFacts) -> IdentityRefusal? {
        if !facts.userExists { return .sessionEnded }
        if !facts.sessionRecent { return .reauthenticationRequired }
        if !facts.linked { return .notLinked }
        if facts.identities <= 1 { return .lastSignInMethod }
        return nil
    }

    /// An operator's unlink of `provider`/`subject` from `user` (`nil`: none has the id), as
    /// `unlink` allows with no session to prove recent: never a full user's last identity.
    /// - Returns: the user and the identity to remove.
    /// - Throws: `IdentityRefusal` (`sessionEnded` for no user, `notLinked`, `lastSignInMethod`).
    package static func operatorUnlink(
        _ user: StoredUser?, provider: String, subject: String
    ) throws -> (user: StoredUser, identity: StoredIdentity) {
        let found = user?.identity(provider, subject)
        if let refusal = unlink(
            UnlinkFacts(
                userExists: user != nil, linked: found != nil, identities: user?.identities.count ?? 0,
                sessionRecent: true))
        {
            throw refusal
        }
        guard let user, let found else { throw IdentityRefusal.notLinked }
        return (user, found)
    }

    /// Whether a link ticket's merge goes through. Every way a ticket can stop describing the two
    /// accounts (spent, the other account gone or merged, the identity moved, both now one) is the
    /// same refusal: the caller learns nothing about the other account.
    package static func merge(_ facts: MergeFacts) -> IdentityRefusal? {
        if facts.ticketSpent || !facts.sourceExists || !facts.targetOwnsIdentity || facts.sameUser {
            return .ticketInvalid
        }
        if facts.sourceDisabled { return .userDisabled }
        if !facts.targetRecent { return .reauthenticationRequired }
        return nil
    }

    /// Whether an account may be deleted by its own session: only one signed in recently, unless
    /// it is a guest's.
    package static func deletion(_ facts: DeletionFacts) -> IdentityRefusal? {
        if !facts.sessionActive { return .sessionEnded }
        if !facts.anonymous && !(facts.secondsSinceSignIn <= facts.window) { return .reauthenticationRequired }
        return nil
    }
}

/// What the store read for a provider's event about one of its people (`applyProviderEvent`).
package struct ProviderEventFacts: Sendable, Hashable {
    /// The event's id was spent already.
    package var replayed: Bool
    /// The identity is linked to a user.
    package var identityKnown: Bool
    /// How many identities that user has, this one included.
    package var identities: Int
    /// The identity signed in after the event was issued: the person consented again since.
    package var signedInSince: Bool

    /// Creates the facts.
    package init(replayed: Bool, identityKnown: Bool, identities: Int, signedInSince: Bool = false) {
        self.replayed = replayed
        self.identityKnown = identityKnown
        self.identities = identities
        self.signedInSince = signedInSince
    }
}

/// What a provider's event does.
package enum ProviderEventVerdict: Sendable, Equatable {
    /// A replay: nothing.
    case ignore
    /// Nobody has the identity: only the event's id is spent.
    case spendOnly
    /// The event applies to the identity (revoked, email forwarding, …).
    case apply
    /// The person deleted their provider account: the identity goes.
    case removeIdentity
    /// … and it was the user's only way in: the user goes, as an account deletion.
    case deleteUser
}

extension Verdicts {
    /// What a provider's event does. A deleted provider account takes its identity, and the user
    /// when no other way in is left (a user kept without any sign-in method could never be reached
    /// again, and holds data about a person who left).
    package static func providerEvent(_ kind: ProviderEvent.Kind, _ facts: ProviderEventFacts) -> ProviderEventVerdict {
        if facts.replayed { return .ignore }
        if !facts.identityKnown { return .spendOnly }
        // A revocation older than the last sign-in: the person consented again after it.
        if kind == .consentRevoked, facts.signedInSince { return .spendOnly }
        guard kind == .accountDeleted else { return .apply }
        return facts.identities <= 1 ? .deleteUser : .removeIdentity
    }
}
