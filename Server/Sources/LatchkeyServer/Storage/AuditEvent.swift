import Foundation
import LatchkeyAPI

/// An event in the audit log, written in the same transaction as what it records.
package struct AuditEvent: Sendable, Equatable {
    /// The event names, one list for every backend and for whoever reads the log.
    package enum Kind: String, Sendable, CaseIterable {
        /// A first sign-in created the user.
        case userCreated = "user.created"
        /// A returning person signed in.
        case userSignedIn = "user.signed_in"
        /// The user was disabled (their sessions ended with it).
        case userDisabled = "user.disabled"
        /// The user was enabled again.
        case userEnabled = "user.enabled"
        /// Every session of the user was ended at once.
        case sessionsRevoked = "user.sessions_revoked"
        /// A session signed out (`POST /v1/auth/signout`); `detail.session_id`.
        case sessionSignedOut = "session.signed_out"
        /// The person ended one of their sessions from another (`DELETE /v1/users/me/sessions/{id}`).
        case sessionEnded = "session.ended"
        /// A spent refresh token was presented again: the session was ended (a stolen token, or
        /// an app that lost its newer one); `detail.session_id`.
        case refreshTokenReused = "session.refresh_reused"
        /// A guest was created (`POST /v1/auth/anonymous`).
        case guestCreated = "user.guest_created"
        /// An identity was linked to the user.
        case identityLinked = "identity.linked"
        /// An identity was unlinked from the user.
        case identityUnlinked = "identity.unlinked"
        /// Another account was merged into the user (`detail.from`: the id that no longer
        /// exists), so the app can move its own rows.
        case userMerged = "user.merged"
        /// The account was deleted; the only event kept for it (a tombstone).
        case userDeleted = "user.deleted"
        /// The app's Facebook permissions of a deleted account's identity were revoked.
        case facebookPermissionsRevoked = "facebook.permissions_revoked"
        /// Revoking them failed for good after every retry.
        case facebookPermissionsRevocationFailed = "facebook.permissions_revocation_failed"
        /// A stored Apple refresh token was revoked at Apple (`detail.client_id`).
        case appleTokenRevoked = "apple.token_revoked"
        /// Revoking it failed for good after every retry.
        case appleTokenRevocationFailed = "apple.token_revocation_failed"
        /// The provider said the person stopped using its sign-in with the app: the identity's
        /// sessions ended and it is marked revoked until its next sign-in.
        case identityConsentRevoked = "identity.consent_revoked"
        /// The provider said the person deleted their account there: the identity was removed
        /// (the user too when it was their only way in: then `user.deleted`, by `provider`).
        case identityProviderAccountDeleted = "identity.provider_account_deleted"
        /// The person stopped email forwarding (Apple's Hide My Email).
        case identityEmailDisabled = "identity.email_disabled"
        /// The person resumed email forwarding.
        case identityEmailEnabled = "identity.email_enabled"
        /// A provider asked for a person's data to be deleted (`detail.request_id`, `policy`); about
        /// no user when Latchkey held nothing about them.
        case deletionRequested = "deletion.requested"
        /// An operator approved a queued deletion request.
        case deletionApproved = "deletion.approved"
        /// An operator refused a deletion request (`detail.reason`).
        case deletionRefused = "deletion.refused"
        /// A deletion request was carried out (`detail.outcome`: `user_deleted`,
        /// `identity_removed`, `nothing_held`); about no user when the user went with it.
        case deletionDone = "deletion.done"
        /// Carrying out a deletion request failed after every retry: it stays in progress, for an
        /// operator to look at.
        case deletionFailed = "deletion.failed"
        /// A provider's notification or callback was refused (bad signature, audience, replay,
        /// malformed): nothing changed. It names no user.
        case providerEventRejected = "provider.event_rejected"
        /// A second factor was added, pending its first code (`detail.factor_id`, `type`).
        case factorEnrolled = "factor.enrolled"
        /// A pending factor's first code was verified: it now guards sign-ins
        /// (`detail.recovery_codes_issued` when it was the user's first).
        case factorActivated = "factor.activated"
        /// A challenge was passed (`detail.by`: `totp` or `recovery_code`, `purpose`: `sign_in` or
        /// `step_up`, `recovery_codes_left` after a recovery code).
        case factorUsed = "factor.used"
        /// Wrong codes in a row made the user's attempts wait (`detail.failures`, `until`).
        case factorLocked = "factor.locked"
        /// A factor was removed (`detail.by`: `user` or `cli`).
        case factorRemoved = "factor.removed"
        /// New recovery codes replaced the old ones.
        case recoveryCodesRegenerated = "factor.recovery_codes_regenerated"
        /// A call to the admin API or console (`detail.admin_key`, `method`, `route`, `status`);
        /// about the user the route names, if any.
        case adminCall = "admin.call"
        /// An admin key was made (`detail.admin_key`, `name`, `by`).
        case adminKeyCreated = "admin_key.created"
        /// An admin key was revoked (`detail.admin_key`, `name`, `by`).
        case adminKeyRevoked = "admin_key.revoked"
    }

    /// Who did what an event records, when it was not the person signing in.
    package enum Actor: String, Sendable, CaseIterable {
        /// The person, through one of their own sessions.
        case user
        /// An operator, with the `latchkey users` commands.
        case commandLine = "cli"
        /// The identity provider, telling us the person deleted their account there.
        case provider
        /// An operator, through the admin API or console (the event's `detail.admin_key` names
        /// the key).
        case admin
    }

    /// What happened.
    package var type: Kind
    /// Whom it concerns; empty for an event about no user (stored as no user).
    package var userID: String
    /// Facts worth keeping (never a token or a secret).
    package var detail: JSONValue

    /// Creates an event.
    package init(type: Kind, userID: String, detail: JSONValue) {
        self.type = type
        self.userID = userID
        self.detail = detail
    }

    /// What disabling or enabling a user records: who did it and how many sessions it ended.
    package static func userState(
        disabled: Bool, userID: String, by actor: Actor, sessionsEnded: Int
    ) -> AuditEvent {
        AuditEvent(
            type: disabled ? .userDisabled : .userEnabled, userID: userID,
            detail: ["by": .string(actor.rawValue), "sessions_ended": .int(sessionsEnded)])
    }

    /// What linking or unlinking an identity records (never a token).
    package static func identity(linked: Bool, userID: String, identity: StoredIdentity) -> AuditEvent {
        AuditEvent(
            type: linked ? .identityLinked : .identityUnlinked, userID: userID,
            detail: [
                "provider": .string(identity.provider), "subject": .string(identity.subject),
                "app_id": .string(identity.appID),
            ])
    }

    /// What a merge records on the account that stays.
    /// - Parameter factors: what became of the merged account's active factors, if it had any.
    package static func merged(
        from source: String, into target: String, identities: Int, factors: MergeFactorVerdict? = nil,
        factorsOfSource: Int = 0
    ) -> AuditEvent {
        var detail: [String: JSONValue] = [
            "from": .string(source), "to": .string(target), "identities_moved": .int(identities),
        ]
        if factorsOfSource > 0 {
            detail[factors == .moveSource ? "factors_moved" : "factors_dropped"] = .int(factorsOfSource)
        }
        return AuditEvent(type: .userMerged, userID: target, detail: .object(detail))
    }

    /// The tombstone of a deleted account: its id, the time (the row's), and who deleted it.
    package static func deleted(userID: String, by actor: Actor) -> AuditEvent {
        AuditEvent(type: .userDeleted, userID: userID, detail: ["by": .string(actor.rawValue)])
    }

    /// What a provider's event records on the user whose identity it concerns.
    package static func providerEvent(_ event: ProviderEvent, userID: String, sessionsEnded: Int) -> AuditEvent {
        let type: Kind =
            switch event.kind {
            case .consentRevoked: .identityConsentRevoked
            case .accountDeleted: .identityProviderAccountDeleted
            case .emailDisabled: .identityEmailDisabled
            case .emailEnabled: .identityEmailEnabled
            }
        var detail = event.detail.objectValue ?? [:]
        detail["provider"] = .string(event.provider)
        detail["subject"] = .string(event.subject)
        if sessionsEnded > 0 { detail["sessions_ended"] = .int(sessionsEnded) }
        return AuditEvent(type: type, userID: userID, detail: .object(detail))
    }

    /// What a data-deletion request's step records: its id and policy, and `extra`.
    package static func deletion(
        _ type: Kind, _ request: StoredDeletionRequest, userID: String?, extra: [String: JSONValue] = [:]
    ) -> AuditEvent {
        var detail = extra
        detail["request_id"] = .string(request.id)
        detail["provider"] = .string(request.provider)
        detail["subject"] = .string(request.subject)
        detail["policy"] = .string(request.policy.rawValue)
        return AuditEvent(type: type, userID: userID ?? "", detail: .object(detail))
    }

    /// What ending one session records: a sign-out, or the person ending it from another.
    package static func sessionEnded(_ sessionID: String, userID: String, signOut: Bool) -> AuditEvent {
        AuditEvent(
            type: signOut ? .sessionSignedOut : .sessionEnded, userID: userID,
            detail: ["session_id": .string(sessionID)])
    }

    /// What a factor's change records: its id and type, and `extra`.
    package static func factor(
        _ type: Kind, userID: String, factorID: String?, factorType: FactorType?, extra: [String: JSONValue] = [:]
    ) -> AuditEvent {
        var detail = extra
        if let factorID { detail["factor_id"] = .string(factorID) }
        if let factorType { detail["type"] = .string(factorType.rawValue) }
        return AuditEvent(type: type, userID: userID, detail: .object(detail))
    }

    /// What making or revoking an admin key records.
    package static func adminKey(created: Bool, _ key: StoredAdminKey, by actor: Actor) -> AuditEvent {
        AuditEvent(
            type: created ? .adminKeyCreated : .adminKeyRevoked, userID: "",
            detail: ["admin_key": .string(key.id), "name": .string(key.name), "by": .string(actor.rawValue)])
    }

    /// What ending every session of a user records.
    package static func sessionsRevoked(userID: String, by actor: Actor, sessionsEnded: Int) -> AuditEvent {
        AuditEvent(
            type: .sessionsRevoked, userID: userID,
            detail: ["by": .string(actor.rawValue), "sessions_ended": .int(sessionsEnded)])
    }
}

/// An event as the audit log holds it.
package struct RecordedAuditEvent: Sendable, Equatable {
    /// The event.
    package var event: AuditEvent
    /// When it was recorded.
    package var at: Date
    /// Its place in the log: later events have larger ids (a page's cursor).
    package var id: Int64
    /// Where it came from.
    package var context: AuditContext

    /// Creates a recorded event.
    package init(
        _ event: AuditEvent, at: Date, id: Int64 = 0, context: AuditContext = AuditContext(node: nil, client: .unknown)
    ) {
        self.event = event
        self.at = at
        self.id = id
        self.context = context
    }
}
