import Crypto
import Foundation
import LatchkeyAPI

/// The domain rules every storage backend applies, decided once here so a backend only stores and
/// fetches: how a sign-in and a client's update change a user's properties, which audit event a
/// sign-in records, and when an Easy Login authorization code may be redeemed. Pure functions, so
/// SQLite and PostgreSQL cannot drift apart on them.
public enum StorageRules {
    /// A returning person's properties after `login`: the mapped ones overwrite the stored ones
    /// when the server refreshes properties on sign-in. `nil` when nothing changes, so the backend
    /// writes nothing (a returning person's profile rarely changes).
    public static func propertiesAfterSignIn(
        stored: [String: JSONValue], login: LoginRecord
    ) -> [String: JSONValue]? {
        guard login.refreshProperties, !login.mappedProperties.isEmpty else { return nil }
        let merged = stored.merging(login.mappedProperties) { _, mapped in mapped }
        return merged == stored ? nil : merged
    }

    /// A stamp of what a sign-in with `login` merges into the stored properties, or `nil` when it
    /// merges nothing (`propertiesAfterSignIn` is then `nil` whatever is stored).
    ///
    /// The merge is idempotent: once a sign-in has merged these mapped properties (or found them
    /// already stored), merging them again changes nothing until something else writes the
    /// properties. So a backend may keep the stamp of the last sign-in's merge beside the user,
    /// forget it whenever anything else writes the properties, and skip reading the properties
    /// when the stamps are equal. A SHA-256 of the sorted-key encoding: equal mapped properties
    /// give equal stamps on every server.
    public static func signInPropertiesStamp(_ login: LoginRecord) -> Data? {
        guard login.refreshProperties, !login.mappedProperties.isEmpty else { return nil }
        return Data(SHA256.hash(data: JSONValue.object(login.mappedProperties).encoded()))
    }

    /// A user's properties after a client's update: each given key is set, and `null` removes it.
    public static func propertiesAfterUpdate(
        current: [String: JSONValue], changes: [String: JSONValue]
    ) -> [String: JSONValue] {
        var result = current
        for (key, value) in changes { result[key] = value == .null ? nil : value }
        return result
    }

    /// When a spent refresh token must have been spent for presenting it again to count as a
    /// retry (`LatchkeyStore.rotateRefreshToken`): after `spentAfter`, at `spentBy` at the latest.
    /// Bounded on both sides because servers' clocks differ: one whose clock lags the server that
    /// spent the token must not stretch the window by its lag. A window of 0 is empty.
    public static func retryBounds(now: Date, window: TimeInterval) -> (spentAfter: Date, spentBy: Date) {
        (now.addingTimeInterval(-window), now.addingTimeInterval(window))
    }

    /// The user a first sign-in creates, as a read returns it: the mapped properties, and the one
    /// identity, first and last seen at `stamp` (the backend's own rounding of now).
    public static func createdUser(_ login: LoginRecord, id: String, at stamp: Date) -> StoredUser {
        let identity = login.identity
        return StoredUser(
            id: id, createdAt: stamp, updatedAt: stamp, disabled: false, properties: login.mappedProperties,
            identities: [signedInIdentity(login, appID: identity.appID, firstSeen: stamp, at: stamp)])
    }

    /// The identity `login` signed in with, as the sign-in leaves it: the login's permissions,
    /// seen last at `stamp`; the app and the first sighting stay the ones stored (a returning
    /// person keeps the app they were first seen with).
    public static func signedInIdentity(
        _ login: LoginRecord, appID: String, firstSeen: Date, at stamp: Date
    ) -> StoredIdentity {
        StoredIdentity(
            provider: login.identity.provider, subject: login.identity.subject, appID: appID,
            grantedPermissions: login.identity.grantedPermissions, firstSeen: firstSeen, lastSeen: stamp)
    }

    /// The audit event a sign-in records, in the same transaction as the sign-in.
    public static func signInEvent(_ login: LoginRecord, userID: String, created: Bool) -> AuditEvent {
        AuditEvent(
            type: created ? .userCreated : .userSignedIn, userID: userID,
            detail: ["subject": .string(login.identity.subject), "app_id": .string(login.identity.appID)])
    }

    /// What a stored authorization code says to a presentation of it (RFC 6749 §4.1.3, RFC 7636
    /// §4.6): redeemable only when the client, the redirect URI and the verifier's challenge all
    /// match (compared in constant time) and it has not expired, and then only for a user who is
    /// not disabled. Whatever the verdict, the backend marks the code spent: a code presented with
    /// the wrong verifier may be in a thief's hands.
    public static func codeVerdict(
        _ stored: StoredAuthorizationCode, presentation: CodePresentation, now: Date
    ) -> CodeVerdict {
        let bound =
            ConstantTime.equals(stored.clientID, presentation.clientID)
            && ConstantTime.equals(stored.redirectURI, presentation.redirectURI)
            && ConstantTime.equals(stored.codeChallenge, presentation.codeChallenge)
        guard bound, stored.expiresAt > now else { return .refuse(.invalid) }
        guard !stored.userDisabled else { return .refuse(.userDisabled) }
        return .redeem
    }
}

/// An event in the audit log.
public struct AuditEvent: Sendable, Equatable {
    /// The event names, one list for every backend and for whoever reads the log.
    public enum Kind: String, Sendable, CaseIterable {
        /// A first sign-in created the user.
        case userCreated = "user.created"
        /// A returning person signed in.
        case userSignedIn = "user.signed_in"
    }

    /// What happened.
    public var type: Kind
    /// Whom it concerns.
    public var userID: String
    /// Facts worth keeping (never a token or a secret).
    public var detail: JSONValue

    /// Creates an event.
    public init(type: Kind, userID: String, detail: JSONValue) {
        self.type = type
        self.userID = userID
        self.detail = detail
    }
}

/// The facts about a stored authorization code that decide whether a presentation redeems it.
public struct StoredAuthorizationCode: Sendable, Equatable {
    /// The client it was issued to.
    public var clientID: String
    /// The redirect URI of the authorization request.
    public var redirectURI: String
    /// The S256 challenge of the app's verifier.
    public var codeChallenge: String
    /// When it stops being redeemable.
    public var expiresAt: Date
    /// Whether its user is disabled now.
    public var userDisabled: Bool

    /// Creates the facts.
    public init(clientID: String, redirectURI: String, codeChallenge: String, expiresAt: Date, userDisabled: Bool) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.expiresAt = expiresAt
        self.userDisabled = userDisabled
    }
}

/// `StorageRules.codeVerdict`'s answer.
public enum CodeVerdict: Sendable, Equatable {
    /// Open the session the code was issued for.
    case redeem
    /// Answer this instead (`.invalid` or `.userDisabled`); the code is spent all the same.
    case refuse(CodeRedemption)
}
