import Foundation
import LatchkeyAPI

/// A verified identity to link to an existing user (`LatchkeyStore.linkIdentity`): the caller's own
/// account through `POST /v1/users/me/identities`, a guest upgrading through a sign-in, or the
/// user another app of the same business already knows.
package struct LinkRecord: Sendable {
    /// The user the identity joins.
    package var userID: String
    /// The identity, first and last seen now.
    package var identity: StoredIdentity
    /// Properties from the provider's profile: they fill only the keys the user does not have
    /// (`StorageRules.propertiesAfterLink`), so linking never overwrites what an account holds.
    package var mappedProperties: [String: JSONValue]
    /// Spent in the same transaction, only when the link goes through (a conflict spends nothing,
    /// so the same credential can still sign in to the account that owns the identity).
    package var singleUse: SingleUseClaims?
    /// The caller's session, for a link the caller asked for (`nil` for a sign-in that links). A
    /// full user's link of an identity it does not have yet needs this session to have signed in
    /// within `reauthenticationWindow` (a stolen access token must not add the thief's Facebook);
    /// re-proving an identity the user has already counts as a fresh sign-in for it.
    package var provingSessionID: String?
    /// `LATCHKEY_REAUTHENTICATION_WINDOW`, for a link with a proving session.
    package var reauthenticationWindow: TimeInterval = 600
    /// A session to open for the user in the same transaction (a sign-in that links).
    package var session: NewSession?
    /// Facebook's `token_for_business`, stored with a new identity.
    package var businessToken: String?
    /// An Easy Login authorization code to store for the user in the same transaction (a link
    /// through Easy Login answers the app a code, which opens a session of the same user).
    package var authorizationCode: NewAuthorizationCode?
    /// Stored instead of `session` or `authorizationCode` when the user has an active second
    /// factor and `provenSecondFactor` is `nil`; the link then throws `SecondFactorRequired` after
    /// committing.
    package var challenge: NewFactorChallenge?
    /// The second factor the proving session proved (its access token says so): a session the
    /// link opens opens with it, and is never held back (`Verdicts.sessionOpening`).
    package var provenSecondFactor: SecondFactorKind?

    /// Creates a link record.
    package init(
        userID: String, identity: StoredIdentity, mappedProperties: [String: JSONValue],
        singleUse: SingleUseClaims? = nil, provingSessionID: String? = nil, reauthenticationWindow: TimeInterval = 600,
        session: NewSession? = nil,
        businessToken: String? = nil, authorizationCode: NewAuthorizationCode? = nil
    ) {
        self.businessToken = businessToken
        self.authorizationCode = authorizationCode
        self.reauthenticationWindow = reauthenticationWindow
        self.userID = userID
        self.identity = identity
        self.mappedProperties = mappedProperties
        self.singleUse = singleUse
        self.provingSessionID = provingSessionID
        self.session = session
    }
}

/// What `LatchkeyStore.linkIdentity` did.
package enum LinkOutcome: Sendable, Equatable {
    /// The identity was added to the user (a guest became a full user).
    case linked(StoredUser)
    /// The user had the identity already; only its last sign-in and permissions changed.
    case alreadyLinked(StoredUser)
    /// The identity belongs to another user (`owner`): nothing changed. The caller is never told
    /// who: the id goes only into the sealed link ticket, which completes for that owner alone.
    /// `through` names the owner's identity the conflict was found by when it is not the one
    /// linked (the same person's identity in another app of the business): the ticket names it.
    case conflict(owner: String, through: IdentityName? = nil)
}

/// An identity's name: its provider and subject.
package struct IdentityName: Sendable, Hashable {
    /// `facebook`, `apple`.
    package var provider: String
    /// The provider's id of the person.
    package var subject: String

    /// Creates a name.
    package init(provider: String, subject: String) {
        self.provider = provider
        self.subject = subject
    }
}

/// Why a link, a merge or a deletion was refused; nothing was written.
package enum IdentityRefusal: Error, Sendable, Equatable {
    /// The id token's `jti` was spent already.
    case replayed
    /// The server nonce is unknown, expired or spent.
    case nonceInvalid
    /// The user is disabled.
    case userDisabled
    /// The caller's user or session no longer exists (deleted, merged away, signed out).
    case sessionEnded
    /// The identity is not linked to the user.
    case notLinked
    /// Unlinking would leave a full user with no way to sign in.
    case lastSignInMethod
    /// The link ticket was spent, or no longer describes the accounts (the identity moved, the
    /// other account is gone).
    case ticketInvalid
    /// The session's sign-in is older than the reauthentication window.
    case reauthenticationRequired
}

/// A merge (`LatchkeyStore.merge`): the user a link ticket was issued to (`sourceUserID`) is merged
/// into the user that owns the ticket's identity (`targetUserID`, the caller).
package struct MergeRecord: Sendable {
    /// The account that goes away.
    package var sourceUserID: String
    /// The caller's account, which stays.
    package var targetUserID: String
    /// The identity the ticket names, which the target must own.
    package var provider: String
    /// The identity's subject.
    package var subject: String
    /// The ticket's single-use value, spent in the same transaction.
    package var ticketID: String
    /// The caller's session, which must have signed in within `reauthenticationWindow` (the person
    /// completing a merge has just signed in with the identity).
    package var targetSessionID: String = ""
    /// `LATCHKEY_REAUTHENTICATION_WINDOW`.
    package var reauthenticationWindow: TimeInterval = 600
    /// Until when the ticket's spend is remembered (its expiry).
    package var ticketExpiresAt: Date
    /// The source's active factors sealed again for the target, each with the stored secret it was
    /// opened from: what moves when only the source has factors (`Verdicts.mergeFactors`).
    package var resealedFactors: [ResealedFactor] = []

    /// Creates a merge record.
    package init(
        sourceUserID: String, targetUserID: String, provider: String, subject: String, ticketID: String,
        ticketExpiresAt: Date, targetSessionID: String = "", reauthenticationWindow: TimeInterval = 600
    ) {
        self.targetSessionID = targetSessionID
        self.reauthenticationWindow = reauthenticationWindow
        self.sourceUserID = sourceUserID
        self.targetUserID = targetUserID
        self.provider = provider
        self.subject = subject
        self.ticketID = ticketID
        self.ticketExpiresAt = ticketExpiresAt
    }
}

/// A factor's secret sealed again for another user (a merge moves it): the row's id, its sealed
/// secret as read, and the new one.
package struct ResealedFactor: Sendable, Hashable {
    /// The factor's id.
    package var id: String
    /// Its secret as stored when read: the move happens only if it is still this.
    package var stored: Data
    /// Its secret sealed for the target user.
    package var sealed: Data

    /// Creates a resealed factor.
    package init(id: String, stored: Data, sealed: Data) {
        self.id = id
        self.stored = stored
        self.sealed = sealed
    }
}

/// A merge that cannot go through as the caller sent it (`Verdicts.mergeFactors`); nothing was
/// written.
package enum MergeFactorRefusal: Error, Sendable, Equatable {
    /// Both accounts have factors: the caller's session must prove one of its own first.
    case stepUp
    /// The merged account's factors changed since the caller sealed them: read and seal again.
    case stale
}

/// Background work kept in the database (`jobs`): it survives restarts, runs on one node at a
/// time (a lease), and is retried with growing delays until it succeeds or gives up.
package struct StoredJob: Sendable, Equatable {
    /// The kinds of work, one list for every backend.
    package enum Kind: String, Sendable, CaseIterable {
        /// `DELETE /{app-scoped-id}/permissions` with the app token, after an account deletion.
        case facebookRevokePermissions = "facebook.revoke_permissions"
        /// `POST /auth/revoke` of a stored Apple refresh token, under the client id it was
        /// issued to, after an account deletion or an unlink.
        case appleRevokeToken = "apple.revoke_token"
        /// Carries out a provider's data-deletion request (`payload.request_id`:
        /// `LatchkeyStore.carryOutDeletionRequest`).
        case dataDeletion = "provider.data_deletion"

        /// The kinds this version runs, as an SQL list of string literals (our own constants):
        /// a job of a kind written by a newer version is left for a node that knows it, never
        /// claimed and leased here in vain.
        package static var sqlList: String { allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ") }
    }

    /// Random id.
    package var id: String
    /// What to do.
    package var kind: Kind
    /// The user it is for (deleted by now, usually): the audit event of its outcome names them.
    package var userID: String
    /// What the work needs (for a revocation: `app_id`, `subject`).
    package var payload: JSONValue
    /// Attempts made so far, this one included once claimed.
    package var attempts: Int

    /// Creates a job.
    package init(id: String, kind: Kind, userID: String, payload: JSONValue, attempts: Int = 0) {
        self.id = id
        self.kind = kind
        self.userID = userID
        self.payload = payload
        self.attempts = attempts
    }
}

/// How a claimed job ended (`LatchkeyStore.finishJob`).
package enum JobOutcome: Sendable, Equatable {
    /// Done (or nothing left to do): the job is deleted and `event`, if any, recorded, in one
    /// transaction.
    case done(AuditEvent?)
    /// Failed for now: tried again at `retryAt`.
    case retry(at: Date, error: String)
    /// Failed for good: the job is deleted and `event`, if any, recorded.
    case gaveUp(AuditEvent?)
}
