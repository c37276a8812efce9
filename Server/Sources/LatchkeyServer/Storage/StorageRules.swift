import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

/// The domain rules every storage backend applies, decided once here so a backend only stores and
/// fetches: how a sign-in and a client's update change a user's properties, which audit event a
/// sign-in records, and what a first sign-in's user looks like. Pure functions, so SQLite and
/// PostgreSQL cannot drift apart on them; the verdicts (whether a sign-in, a refresh or a code's
/// redemption goes through) are `Verdicts`.
package enum StorageRules {
    /// A returning person's properties after `login`: the mapped ones overwrite the stored ones
    /// when the server refreshes properties on sign-in. `nil` when nothing changes, so the backend
    /// writes nothing (a returning person's profile rarely changes).
    package static func propertiesAfterSignIn(
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
    package static func signInPropertiesStamp(_ login: LoginRecord) -> Data? {
        guard login.refreshProperties, !login.mappedProperties.isEmpty else { return nil }
        return Data(SHA256.hash(data: JSONValue.object(login.mappedProperties).encoded()))
    }

    /// A user's properties after linking an identity whose profile maps to `mapped`: the mapped
    /// values fill only the keys the user does not have, so a link never overwrites what the
    /// account holds (its own sign-ins, the app's writes). `nil` when nothing changes.
    package static func propertiesAfterLink(
        stored: [String: JSONValue], mapped: [String: JSONValue]
    ) -> [String: JSONValue]? {
        let filled = stored.merging(mapped) { kept, _ in kept }
        return filled == stored ? nil : filled
    }

    /// The properties of the account a merge keeps: the caller's (`target`) win, and the merged
    /// account's fill the keys the caller does not have.
    package static func propertiesAfterMerge(
        target: [String: JSONValue], source: [String: JSONValue]
    ) -> [String: JSONValue] {
        target.merging(source) { kept, _ in kept }
    }

    /// The background work an account's deletion leaves: for each Facebook identity, revoking the
    /// app's permissions (`DELETE /{app-scoped-id}/permissions` with that app's token), so the
    /// person's Facebook settings no longer list the app; and revoking each stored provider
    /// token (`revocationJobs`).
    package static func deletionJobs(
        userID: String, identities: [StoredIdentity], tokens: [StoredProviderToken], at now: Date
    ) -> [StoredJob] {
        identities.filter { $0.provider == "facebook" }.map {
            StoredJob(
                id: RandomToken.base64URL(bytes: 16), kind: .facebookRevokePermissions, userID: userID,
                payload: ["app_id": .string($0.appID), "subject": .string($0.subject)])
        } + revocationJobs(userID: userID, tokens: tokens, at: now)
    }

    /// Revoking each of `tokens` at its provider, under the client id it was issued to: every
    /// stored token, since Apple does not say whether revoking one ends the others (Apple forum
    /// 859842). The sealed token travels in the job, base64url, with when it was queued: a token
    /// the person's identity got after that (they came back) means a new authorization, which a
    /// late revocation must not end (`AppleTokenRevoker`).
    package static func revocationJobs(userID: String, tokens: [StoredProviderToken], at now: Date) -> [StoredJob] {
        tokens.filter { $0.provider == "apple" }.map {
            StoredJob(
                id: RandomToken.base64URL(bytes: 16), kind: .appleRevokeToken, userID: userID,
                payload: [
                    "client_id": .string($0.clientID), "subject": .string($0.subject),
                    "token": .string(Base64URL.encode($0.token)),
                    "queued_at": .int(Int(now.timeIntervalSince1970.rounded(.down))),
                ])
        }
    }

    /// Whether `resealed` covers exactly the factors `stored` (id and sealed secret, as read in the
    /// merge's transaction): a factor added, removed or resealed since the caller read them leaves
    /// one behind or moves a stale secret.
    package static func coversExactly(_ resealed: [ResealedFactor], stored: [(id: String, secret: Data)]) -> Bool {
        Set(resealed.map { [Data($0.id.utf8), $0.stored] }) == Set(stored.map { [Data($0.id.utf8), $0.secret] })
            && resealed.count == stored.count
    }

    /// Whether a session whose latest sign-in (or re-proof of a linked identity) was at
    /// `authenticatedAt` counts as recent at `now`; `nil` (no such active session) never does.
    package static func isRecent(authenticatedAt: Date?, now: Date, window: TimeInterval) -> Bool {
        guard let authenticatedAt else { return false }
        return now.timeIntervalSince(authenticatedAt) <= window
    }

    /// A user's properties after a client's update: each given key is set, and `null` removes it.
    package static func propertiesAfterUpdate(
        current: [String: JSONValue], changes: [String: JSONValue]
    ) -> [String: JSONValue] {
        var result = current
        for (key, value) in changes { result[key] = value == .null ? nil : value }
        return result
    }

    /// A user's properties once a provider's deletion request took the ones its provider wrote.
    package static func propertiesWithout(_ keys: [String], from current: [String: JSONValue]) -> [String: JSONValue] {
        current.filter { !keys.contains($0.key) }
    }

    /// A deletion request once `verdict` was carried out at `stamp` (the backend's rounding of
    /// now), and the `deletion.done` event it records: about the user whose identity went, none
    /// when the user went too (their tombstone says so) or nothing was held.
    package static func deletionDone(
        _ request: StoredDeletionRequest, verdict: DataDeletionVerdict, userID: String, at stamp: Date
    ) -> (request: StoredDeletionRequest, event: AuditEvent) {
        var done = request
        done.status = .done
        done.heldData = verdict != .nothingHeld
        done.updatedAt = stamp
        let event = AuditEvent.deletion(
            .deletionDone, done, userID: verdict == .removeIdentity ? userID : nil,
            extra: ["outcome": .string(verdict.outcome)])
        return (done, event)
    }

    /// The sessions that end when `identity` of `user` is revoked or (`removing`) removed: those it
    /// opened (the store adds those of unknown origin and guests'), given as `identity`; or every
    /// one (`nil`) with `allSessions` (`LATCHKEY_DEAUTHORIZE_ENDS=all-sessions`), or when removing
    /// it leaves the user no way in.
    package static func sessionsEnded(
        by identity: StoredIdentity, of user: StoredUser, removing: Bool, allSessions: Bool
    ) -> StoredIdentity? {
        allSessions || (removing && user.identities.count <= 1) ? nil : identity
    }

    /// Whether `user`'s identity of `event` signed in after the provider issued `event`, in a
    /// later second (providers stamp whole seconds).
    package static func signedInSince(_ event: ProviderEvent, _ user: StoredUser?) -> Bool {
        guard let issuedAt = event.issuedAt, let identity = user?.identity(event.provider, event.subject) else {
            return false
        }
        return identity.lastSeen >= issuedAt.addingTimeInterval(1)
    }

    /// Whether an identity first seen at `firstSeen` was held when a request was issued at
    /// `issuedAt` (whole seconds): an account made later is not what the request is about.
    package static func heldWhenIssued(firstSeen: Date, issuedAt: Date) -> Bool {
        firstSeen < issuedAt.addingTimeInterval(1)
    }

    /// The job that carries out a deletion request, queued when it goes in progress.
    package static func deletionJob(for request: StoredDeletionRequest) -> StoredJob {
        StoredJob(
            id: RandomToken.base64URL(bytes: 16), kind: .dataDeletion, userID: request.userID ?? "",
            payload: ["request_id": .string(request.id)])
    }

    /// The user a first sign-in creates, as a read returns it: the mapped properties, and the one
    /// identity, first and last seen at `stamp` (the backend's own rounding of now).
    package static func createdUser(_ login: LoginRecord, id: String, at stamp: Date) -> StoredUser {
        let identity = login.identity
        return StoredUser(
            id: id, createdAt: stamp, updatedAt: stamp, disabled: false, properties: login.mappedProperties,
            identities: [signedInIdentity(login, appID: identity.appID, firstSeen: stamp, at: stamp)])
    }

    /// The identity `login` signed in with, as the sign-in leaves it: the login's permissions,
    /// seen last at `stamp`; the app and the first sighting stay the ones stored (a returning
    /// person keeps the app they were first seen with).
    package static func signedInIdentity(
        _ login: LoginRecord, appID: String, firstSeen: Date, at stamp: Date
    ) -> StoredIdentity {
        StoredIdentity(
            provider: login.identity.provider, subject: login.identity.subject, appID: appID,
            grantedPermissions: login.identity.grantedPermissions, firstSeen: firstSeen, lastSeen: stamp)
    }

    /// The audit event a sign-in records, in the same transaction as the sign-in.
    /// It names the identity and how the person signed in (an Easy Login code's session opens
    /// later, at its redemption).
    package static func signInEvent(_ login: LoginRecord, userID: String, created: Bool) -> AuditEvent {
        let method = login.session?.method ?? (login.authorizationCode != nil ? .easyLogin : nil)
        var detail: [String: JSONValue] = [
            "provider": .string(login.identity.provider), "subject": .string(login.identity.subject),
            "app_id": .string(login.identity.appID),
        ]
        if let method { detail["method"] = .string(method.rawValue) }
        return AuditEvent(type: created ? .userCreated : .userSignedIn, userID: userID, detail: .object(detail))
    }

    /// `text` as a JSON string, as the stores hold string properties: searches compare JSON texts,
    /// which both backends read without unescaping (`->`).
    package static func jsonText(_ text: String) -> String {
        String(decoding: JSONValue.string(text).encoded(), as: UTF8.self)
    }

    /// The JSON texts a property equal to an operator's `value` may be stored as: the string
    /// `value`, and `value` itself when it is a JSON number, `true`, `false` or `null` written as
    /// the stores write it (`country=DE` finds `"DE"`; `age=42` finds `42` and `"42"`).
    package static func propertySearchValues(_ value: String) -> (text: String, literal: String?) {
        guard let parsed = try? JSONValue.decode(Data(value.utf8)) else { return (jsonText(value), nil) }
        switch parsed {
        case .object, .array, .string: return (jsonText(value), nil)
        default:
            let written = String(decoding: parsed.encoded(), as: UTF8.self)
            return (jsonText(value), written == value ? written : nil)
        }
    }
}
