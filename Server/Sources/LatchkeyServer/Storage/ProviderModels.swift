import Foundation
import LatchkeyAPI

/// A provider's refresh token for one of its clients, kept to revoke the person's authorization
/// when their account or that identity goes (Apple requires it: TN3194). Sealed by the server
/// (`ProviderTokenSealing`) before the store sees it; keyed by the identity and the client id,
/// so the newest token of each client replaces the one before, and it follows its identity
/// through a merge without being rewritten.
package struct StoredProviderToken: Sendable, Equatable {
    /// `apple`.
    package var provider: String
    /// The identity's subject.
    package var subject: String
    /// The client id the token was issued to (revoking needs the same one).
    package var clientID: String
    /// The sealed token.
    package var token: Data

    /// Creates a token record.
    package init(provider: String, subject: String, clientID: String, token: Data) {
        self.provider = provider
        self.subject = subject
        self.clientID = clientID
        self.token = token
    }
}

/// What a provider told us about one of its people, out of band (Apple's server-to-server
/// notifications; Facebook's callbacks later), for `LatchkeyStore.applyProviderEvent`.
package struct ProviderEvent: Sendable, Equatable {
    /// What happened.
    package enum Kind: String, Sendable, CaseIterable {
        /// The person stopped using the provider's sign-in with the app: the identity's sessions
        /// end, its stored tokens are dropped (they no longer work), and it is marked revoked
        /// until its next sign-in.
        case consentRevoked = "consent_revoked"
        /// The person deleted their account at the provider: the identity goes, and the user
        /// with it when it was their only way in (`Verdicts.providerRemoval`).
        case accountDeleted = "account_deleted"
        /// The person stopped email forwarding (Apple's Hide My Email).
        case emailDisabled = "email_disabled"
        /// The person resumed email forwarding.
        case emailEnabled = "email_enabled"
    }

    /// What happened.
    package var kind: Kind
    /// `apple`.
    package var provider: String
    /// The identity's subject.
    package var subject: String
    /// The event's own id (a JWS `jti`): spent in the same transaction, so a replay changes nothing.
    package var eventID: String
    /// Until when the spent id is remembered.
    package var eventIDExpiresAt: Date
    /// Facts for the audit event (the provider's event time, the email's kind): never a token.
    package var detail: JSONValue
    /// Whether revoking consent ends every session of the user, not only the ones the identity
    /// opened (and those whose opener is unknown): `LATCHKEY_DEAUTHORIZE_ENDS=all-sessions`.
    package var endsAllSessions: Bool
    /// When the provider issued it, when it says: a revocation issued before the identity's last
    /// sign-in is out of date (the person consented again since) and changes nothing.
    package var issuedAt: Date?

    /// Creates an event.
    package init(
        kind: Kind, provider: String, subject: String, eventID: String, eventIDExpiresAt: Date, detail: JSONValue,
        endsAllSessions: Bool = false, issuedAt: Date? = nil
    ) {
        self.endsAllSessions = endsAllSessions
        self.issuedAt = issuedAt
        self.kind = kind
        self.provider = provider
        self.subject = subject
        self.eventID = eventID
        self.eventIDExpiresAt = eventIDExpiresAt
        self.detail = detail
    }
}

/// What `LatchkeyStore.applyProviderEvent` did.
package enum ProviderEventOutcome: Sendable, Equatable {
    /// The event's id was spent already: nothing changed.
    case replayed
    /// No user has the identity: nothing changed (the id is spent all the same).
    case unknownIdentity
    /// Applied to the identity of `userID`; `userDeleted` when the user went with it.
    case applied(userID: String, userDeleted: Bool)
}

/// An identity's provider-side state (`LatchkeyStore.identityState`).
package struct IdentityState: Sendable, Equatable {
    /// Whose identity it is.
    package var userID: String
    /// When the provider said the person revoked the app's access, until the next sign-in.
    package var revokedAt: Date?
    /// Whether the person stopped email forwarding (Apple's Hide My Email).
    package var emailForwardingDisabled: Bool
    /// The client ids whose refresh tokens are stored.
    package var tokenClientIDs: [String]

    /// Creates a state.
    package init(userID: String, revokedAt: Date?, emailForwardingDisabled: Bool, tokenClientIDs: [String]) {
        self.userID = userID
        self.revokedAt = revokedAt
        self.emailForwardingDisabled = emailForwardingDisabled
        self.tokenClientIDs = tokenClientIDs
    }
}
