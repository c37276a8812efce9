import Foundation
import HTTPTypes
import LatchkeyAPI
import NIOCore

/// A user as stored.
package struct StoredUser: Sendable, Equatable {
    /// Random URL-safe id.
    package var id: String
    /// Creation time.
    package var createdAt: Date
    /// Last change.
    package var updatedAt: Date
    /// Disabled users cannot sign in or refresh.
    package var disabled: Bool
    /// Mapped and app-set properties.
    package var properties: [String: JSONValue]
    /// Linked provider accounts.
    package var identities: [StoredIdentity]
    /// A guest (`POST /v1/auth/anonymous`) no identity was linked to yet. Linking one clears it
    /// for good: a user with an identity is never anonymous.
    package var anonymous: Bool

    /// Creates a user.
    package init(
        id: String, createdAt: Date, updatedAt: Date, disabled: Bool, properties: [String: JSONValue],
        identities: [StoredIdentity], anonymous: Bool = false
    ) {
        self.id = id
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.disabled = disabled
        self.properties = properties
        self.identities = identities
        self.anonymous = anonymous
    }
}

extension StoredUser {
    /// The user's identity of `provider` with `subject`, if they have it.
    package func identity(_ provider: String, _ subject: String) -> StoredIdentity? {
        identities.first { $0.provider == provider && $0.subject == subject }
    }
}

/// A provider account linked to a user. Unique per (provider, subject). Provider-neutral: a
/// Facebook app-scoped id today, an Apple `sub` next; the rules about identities (linking,
/// conflicts, merging, deletion) never look at which provider it is.
package struct StoredIdentity: Sendable, Equatable {
    /// `facebook` (or `apple`).
    package var provider: String
    /// The provider's id for the person (a Facebook app-scoped id).
    package var subject: String
    /// The provider app the subject belongs to (a Facebook app id).
    package var appID: String
    /// Permissions granted at the last sign-in.
    package var grantedPermissions: [String]
    /// First and last sign-in.
    package var firstSeen: Date
    /// Last sign-in.
    package var lastSeen: Date

    /// Creates an identity.
    package init(
        provider: String, subject: String, appID: String, grantedPermissions: [String], firstSeen: Date, lastSeen: Date
    ) {
        self.provider = provider
        self.subject = subject
        self.appID = appID
        self.grantedPermissions = grantedPermissions
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}

/// What a successful Facebook verification contributes to a login.
package struct LoginRecord: Sendable {
    /// The identity to find or create.
    package var identity: StoredIdentity
    /// Properties produced by the field mapping.
    package var mappedProperties: [String: JSONValue]
    /// Whether mapped properties overwrite existing ones on a repeat login.
    package var refreshProperties: Bool
    /// A fresh id for the user, used only when this login creates one.
    package var newUserID: String
    /// The session to open for the user; `nil` when an authorization code is issued instead
    /// (Easy Login opens the session when the code is redeemed).
    package var session: NewSession?
    /// Spent first, in the same transaction; a conflict throws `SignInConflict`.
    package var singleUse: SingleUseClaims?
    /// An Easy Login authorization code to store for the user, in the same transaction.
    package var authorizationCode: NewAuthorizationCode?
    /// A new identity is refused with `SignInConflict.newIdentity`, writing nothing, so the server
    /// can first ask Facebook whether the person has an identity of another app of the same
    /// business (`LATCHKEY_FACEBOOK_JOIN_BY_BUSINESS`).
    package var joinsByBusiness = false
    /// Facebook's `token_for_business`, stored with a new identity.
    package var businessToken: String?
    /// Stored instead of `session` or `authorizationCode` when the user has an active second
    /// factor (`Verdicts.holdsForSecondFactor`); the sign-in then throws `SecondFactorRequired`
    /// after committing. Without one, such a user's sign-in opens nothing and throws the same.
    package var challenge: NewFactorChallenge?

    /// Creates a login record.
    package init(
        identity: StoredIdentity, mappedProperties: [String: JSONValue], refreshProperties: Bool, newUserID: String,
        session: NewSession?, singleUse: SingleUseClaims? = nil, authorizationCode: NewAuthorizationCode? = nil
    ) {
        self.singleUse = singleUse
        self.authorizationCode = authorizationCode
        self.identity = identity
        self.mappedProperties = mappedProperties
        self.refreshProperties = refreshProperties
        self.newUserID = newUserID
        self.session = session
    }
}

/// A session to create, with its first refresh token (stored only as a hash).
package struct NewSession: Sendable {
    /// Session id.
    package var id: String
    /// SHA-256 of the refresh token.
    package var refreshTokenHash: Data
    /// Creation time.
    package var createdAt: Date
    /// When the refresh token expires if unused.
    package var refreshExpiresAt: Date
    /// How it is opened. The identity that opens it is the store's to record, from the operation:
    /// a sign-in's or a link's identity, the one a redeemed code was issued to, none for a guest.
    package var method: SessionMethod
    /// The client opening it.
    package var client: ClientInfo
    /// The second factor proven before it opened (`aal` 2), if any.
    package var secondFactor: SecondFactorKind?

    /// Creates a new-session record.
    package init(
        id: String, refreshTokenHash: Data, createdAt: Date, refreshExpiresAt: Date, method: SessionMethod = .guest,
        client: ClientInfo = .unknown, secondFactor: SecondFactorKind? = nil
    ) {
        self.secondFactor = secondFactor
        self.id = id
        self.refreshTokenHash = refreshTokenHash
        self.createdAt = createdAt
        self.refreshExpiresAt = refreshExpiresAt
        self.method = method
        self.client = client
    }
}

/// The outcome of presenting a refresh token.
package enum RefreshOutcome: Sendable, Equatable {
    /// The token was current; it is now spent and `newHash` is the session's current token.
    /// `anonymous`: the user is a guest (the new access token says so); `assurance`: how the
    /// session was authenticated (the new access token's `amr` and `aal`).
    case rotated(sessionID: String, userID: String, anonymous: Bool = false, assurance: SessionAssurance = .unrecorded)
    /// The token was already spent: the session is now revoked.
    case reused(sessionID: String)
    /// The token was spent and its successor never used: the app is retrying a refresh whose
    /// answer it lost or failed to save. Nothing changed; `successorHash` names which candidate.
    case retried(
        sessionID: String, userID: String, successorHash: Data, anonymous: Bool = false,
        assurance: SessionAssurance = .unrecorded)
    /// The token was spent moments ago and its successor already used, by a concurrent refresh of
    /// the same session: nothing changed and nothing is issued.
    case superseded(sessionID: String)
    /// Unknown, expired, or belonging to a revoked session.
    case invalid
    /// The user is disabled: the session is now revoked and nothing was issued.
    case userDisabled(sessionID: String)
}

/// A stored signing key for session tokens.
package struct StoredSigningKey: Sendable, Equatable {
    /// Key id.
    package var kid: String
    /// The private key as stored: sealed under the key-encryption key (`SigningKeyProtection`),
    /// or its 32 raw bytes where plain storage was explicitly allowed. The store never sees the
    /// key-encryption key.
    package var privateKey: Data
    /// Creation time.
    package var createdAt: Date
    /// When it stopped signing.
    package var retiredAt: Date?

    /// Creates a stored key.
    package init(kid: String, privateKey: Data, createdAt: Date, retiredAt: Date?) {
        self.kid = kid
        self.privateKey = privateKey
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// Values a login spends exactly once, inside the sign-in transaction.
package struct SingleUseClaims: Sendable, Equatable {
    /// The id token's `jti`, scoped by app.
    package var jti: String
    /// When the jti record may be forgotten (the token's expiry).
    package var jtiExpiresAt: Date
    /// A server-issued nonce to consume, when the configuration requires them.
    package var serverNonce: String?

    /// Creates the claims.
    package init(jti: String, jtiExpiresAt: Date, serverNonce: String?) {
        self.jti = jti
        self.jtiExpiresAt = jtiExpiresAt
        self.serverNonce = serverNonce
    }
}

/// Why `signIn` refused to record a login.
package enum SignInConflict: Error, Sendable, Equatable {
    /// The `jti` was already spent.
    case replayed
    /// The server nonce is unknown, expired or spent.
    case nonceInvalid
    /// The identity belongs to a disabled user; no session was opened.
    case userDisabled
    /// The identity is new and the login asked to join by business first (`joinsByBusiness`);
    /// nothing was written.
    case newIdentity
}

/// What the token endpoint learns about a presented refresh token before rotating it.
package struct RefreshTokenFamily: Sendable, Equatable {
    /// The session the token belongs to.
    package var sessionID: String
    /// Whether the token was already spent (presenting it again revokes the session).
    package var spent: Bool
    /// Whether the session has ended (revoked): the token is refused whatever the limits say.
    package var ended: Bool

    /// Creates a family record.
    package init(sessionID: String, spent: Bool, ended: Bool = false) {
        self.sessionID = sessionID
        self.spent = spent
        self.ended = ended
    }
}
