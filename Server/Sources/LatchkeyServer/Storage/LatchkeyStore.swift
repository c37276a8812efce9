import Foundation
import HTTPTypes
import LatchkeyAPI
import NIOCore

/// Everything the server persists. Each method is one atomic operation: a backend runs it in one
/// transaction, so nothing is half-written when a step fails and concurrent calls cannot interleave.
///
/// One contract test suite runs over every implementation.
package protocol LatchkeyStore: Sendable {
    /// Creates or upgrades the schema.
    func migrate() async throws

    /// The newest migration applied; 0 for a database Latchkey never migrated (the commands that
    /// act on an existing deployment refuse one, rather than create tables in a wrong database).
    func schemaVersion() async throws -> Int

    /// Finds the user of `login.identity` or creates user and identity; applies mapped properties
    /// (all on creation, on later logins only when `refreshProperties`); opens `login.session` and
    /// stores `login.authorizationCode`, when given, unless `Verdicts.holdsForSecondFactor` says the
    /// user's active factors hold them back: then `login.challenge` is stored instead, and the
    /// call throws `SecondFactorRequired` after committing.
    /// Two concurrent first logins of one person create exactly one user. `login.singleUse` is
    /// spent first, in the same transaction.
    /// - Throws: `SignInConflict` when a single-use value was already spent.
    /// - Returns: the user and whether this call created it.
    func signIn(_ login: LoginRecord, now: Date) async throws -> (user: StoredUser, created: Bool)

    /// The user with `id`, with identities.
    func user(id: String) async throws -> StoredUser?

    /// Merges `properties` into the user's (a `.null` value removes the key).
    func updateProperties(userID: String, properties: [String: JSONValue], now: Date) async throws -> StoredUser?

    /// The session (the refresh-token family) a refresh token belongs to, and whether the token
    /// was already spent; `nil` for a token never issued. Read before the rotation: the token
    /// endpoint limits refreshes per family before it spends anything, and never limits a spent
    /// token, whose rotation must run to revoke the session.
    func refreshTokenFamily(hash: Data) async throws -> RefreshTokenFamily?

    /// Spends a refresh token and stores its successor (`newHash`, remembered as the token's
    /// successor) for the same session; a disabled user revokes the session.
    ///
    /// A spent token is judged by `Verdicts.refresh`: the store reads whether its stored
    /// successor is one of `retryCandidates` (the server derives the successor from the token, so
    /// only a holder of the server's keys can name it), whether that successor is unspent and
    /// unexpired or spent, and whether the token was spent less than `retryWindow` seconds ago
    /// (and, since servers' clocks differ, not more than that ahead of `now` either). A retry
    /// changes nothing and answers `.retried` with the successor; a window of 0 turns retries off.
    func rotateRefreshToken(
        hash: Data, newHash: Data, now: Date, newExpiresAt: Date, retryWindow: TimeInterval, retryCandidates: [Data]
    ) async throws -> RefreshOutcome

    /// Disables or re-enables a user; disabling revokes their sessions. Records
    /// `AuditEvent.userState` in the same transaction, naming `actor`.
    /// - Returns: `nil` when there is no such user; else how many active sessions it ended (none
    ///   when enabling).
    @discardableResult
    func setUserDisabled(id: String, disabled: Bool, now: Date, by actor: AuditEvent.Actor) async throws -> Int?

    /// The user with `id` when `sessionID` is one of their sessions, active, and the user is not
    /// disabled; one read for `GET /v1/users/me`.
    func activeUser(id: String, sessionID: String) async throws -> StoredUser?

    /// Whether the session exists, is not revoked, and its user is not disabled.
    func isSessionActive(id: String) async throws -> Bool

    /// How the session `id` proved who holds it, as of `now` (`SessionProof.active`); `nil` when
    /// there is no such session.
    func sessionProof(id: String, now: Date) async throws -> SessionProof?

    /// Revokes one session (sign-out). Returns whether it was active.
    @discardableResult
    func revokeSession(id: String, now: Date) async throws -> Bool

    /// The user's active sessions (not ended, not expired at `now`), newest first, at most `limit`.
    func sessions(userID: String, now: Date, limit: Int) async throws -> [StoredSession]

    /// Ends the session `id` when it is one of `userID`'s and active, recording
    /// `AuditEvent.sessionEnded` (a sign-out when `signOut`) in the same transaction.
    /// - Returns: whether it was active (another user's session is never touched).
    @discardableResult
    func endSession(id: String, userID: String, now: Date, signOut: Bool) async throws -> Bool

    /// Revokes every session of a user and, when the user exists, records
    /// `AuditEvent.sessionsRevoked` naming `actor` in the same transaction.
    /// - Returns: how many sessions were active.
    @discardableResult
    func revokeSessions(userID: String, now: Date, by actor: AuditEvent.Actor) async throws -> Int

    /// The user's audit events, newest first, at most `limit`, only those older than the event
    /// `before` (its id) when given: a page of the log, the next one starting after its last id.
    func auditEvents(userID: String, before: Int64?, limit: Int) async throws -> [RecordedAuditEvent]

    /// Records `value` of `kind` as used until `expiresAt`; `false` when it is already recorded and
    /// that record has not expired (replay). An expired record counts as absent: deleting it is
    /// `prune`'s job, and whether it ran yet must not change the answer.
    func useOnce(kind: String, value: String, expiresAt: Date, now: Date) async throws -> Bool

    /// Stores an Easy Login request until Facebook's answer, as releases before sealed requests
    /// did (the server now stores nothing at `authorize`: `SealedRequest`). Kept so the contract
    /// pins the rows older nodes still write during a rolling upgrade, which
    /// `takePendingAuthorization` reads. Returns `false`, storing nothing, when `limit` unexpired
    /// requests are already waiting. Expired requests never count, pruned yet or not.
    func savePendingAuthorization(_ request: PendingAuthorization, now: Date, limit: Int) async throws -> Bool

    /// Removes and returns the pending request stored under `handleHash` (single use), expired or
    /// not: the caller still needs an expired request's redirect URI to tell the app. Only a
    /// callback for a request an older node parked (a rolling upgrade) finds one.
    func takePendingAuthorization(handleHash: Data) async throws -> PendingAuthorization?

    /// Redeems an authorization code (stored by `signIn`): checks its bindings, spends it, and opens
    /// `session` (whose id is ignored: the code carries the id it promised).
    func redeemAuthorizationCode(
        _ presentation: CodePresentation, session: NewSession, now: Date
    ) async throws -> CodeRedemption

    /// Stores a server-issued nonce. Expired ones stay until `prune`; a sign-in never accepts them.
    func storeNonce(_ nonce: String, expiresAt: Date, now: Date) async throws

    /// Deletes what `cutoffs` says is of no more use: at most `limit` rows of each table, in one
    /// short transaction, so a prune never holds the database long. Call again while the report
    /// `reachedLimit(limit)`.
    ///
    /// Nothing else deletes expired records (the request paths never pay for it), and no answer of
    /// the other methods depends on whether a prune has run: a missing session reads as ended.
    /// A session's refresh tokens are deleted with it, never before: a spent token of a live
    /// session must stay, or presenting it would no longer revoke the session.
    /// - Parameters:
    ///   - cutoffs: the dates decided by the server (`PruneCutoffs(now:configuration:)`).
    ///   - limit: the most rows deleted from each table by this call.
    /// - Returns: how many rows each table lost.
    func prune(_ cutoffs: PruneCutoffs, limit: Int) async throws -> PruneReport

    // MARK: Identities and accounts (each decided by `Verdicts`, `IdentityVerdicts.swift`)

    /// Creates a guest (a user with no identity, `anonymous`) and opens `session` for it.
    /// Records `AuditEvent.Kind.guestCreated`.
    func createGuest(id: String, session: NewSession, now: Date) async throws -> StoredUser

    /// Links `link.identity` to `link.userID` as `Verdicts.link` decides on the facts read in the
    /// same transaction: a new identity is added (a guest becomes a full user, the mapped
    /// properties fill missing keys), one the user has is touched, one another user has is a
    /// `.conflict` that writes nothing. Single-use values are spent and the proving session marked
    /// freshly signed in only when the link goes through.
    /// - Throws: `IdentityRefusal` (nothing written).
    func linkIdentity(_ link: LinkRecord, now: Date) async throws -> LinkOutcome

    /// The user holding an identity whose Facebook `token_for_business` is `token` (the same person
    /// through another app of the same business), or `nil`.
    func userID(businessToken token: String) async throws -> String?

    /// Removes an identity from a user, as `Verdicts.unlink` allows (`sessionID` must have signed
    /// in within `reauthenticationWindow`), and ends the user's other sessions: whoever signed in
    /// with the removed identity is signed out with it.
    /// - Throws: `IdentityRefusal` (`notLinked`, `lastSignInMethod`, `sessionEnded`,
    ///   `reauthenticationRequired`).
    /// - Returns: the user after the change.
    func unlinkIdentity(
        userID: String, sessionID: String, provider: String, subject: String, now: Date,
        reauthenticationWindow: TimeInterval
    ) async throws -> StoredUser

    /// Merges `merge.sourceUserID` into `merge.targetUserID` as `Verdicts.merge` allows: the
    /// source's identities move over, its properties fill the target's missing keys
    /// (`StorageRules.propertiesAfterMerge`), its sessions end with it, it is deleted, and
    /// `user.merged` is recorded, spending the ticket, all in one transaction.
    /// - Throws: `IdentityRefusal` (nothing written).
    /// - Returns: the target after the merge.
    func merge(_ merge: MergeRecord, now: Date) async throws -> StoredUser

    /// Deletes the user of `sessionID` as `Verdicts.deletion` allows: the user, identities,
    /// properties, sessions and codes go at once, the user's audit events give way to one
    /// tombstone (`user.deleted`: the id and the time, nothing personal), and the jobs
    /// `StorageRules.deletionJobs` names (revoking provider permissions) are queued, in the same
    /// transaction.
    /// - Throws: `IdentityRefusal` (`sessionEnded`, `reauthenticationRequired`).
    func deleteUser(id: String, sessionID: String, now: Date, reauthenticationWindow: TimeInterval) async throws

    /// Stores a provider's refresh token for an identity (`StoredProviderToken`), replacing the
    /// one stored for the same client id, and clears the identity's revoked mark: a new token
    /// means the person consented again. Written before the sign-in or link that follows, so a
    /// token Apple issued is never lost to a crash in between (a token whose identity never
    /// appears is revoked by pruning: `PruneCutoffs.orphanProviderTokensBefore`).
    func saveProviderToken(_ token: StoredProviderToken, now: Date) async throws

    /// Applies a provider's out-of-band event as `Verdicts.providerEvent` decides, spending its
    /// id, recording its audit event and queueing revocations, in one transaction.
    func applyProviderEvent(_ event: ProviderEvent, now: Date) async throws -> ProviderEventOutcome

    /// Up to `limit` stored provider tokens whose bytes do not begin with `sealedPrefix` (stored
    /// plain, or sealed under another key-encryption key), in key order, skipping the first `skip`
    /// (ones that could not be opened): what `ProviderTokenSealing.resealAll` seals again.
    func providerTokensToReseal(sealedPrefix: Data, skip: Int, limit: Int) async throws -> [StoredProviderToken]

    /// Replaces a stored token's bytes with `sealed` when they are still `token.token` (a sign-in
    /// may have saved a newer token meanwhile); whether it did.
    func replaceProviderToken(_ token: StoredProviderToken, with sealed: Data) async throws -> Bool

    /// When the token of `clientID` stored for an identity was saved, or `nil` when none is.
    func providerTokenSavedAt(provider: String, subject: String, clientID: String) async throws -> Date?

    /// An identity's provider-side state, or `nil` when no user has it.
    func identityState(provider: String, subject: String) async throws -> IdentityState?

    /// Records an audit event on its own (one about no user: a refused provider notification).
    func recordEvent(_ event: AuditEvent, now: Date) async throws

    // MARK: Second factor (each attempt decided by `Verdicts.factorAttempt`)

    /// Adds a pending factor for its user, after deleting the user's pending factors added before
    /// `pendingSince` (an enrolment abandoned). Refused (`false`, nothing written) when the user
    /// does not exist or would hold more than `limit` factors. Records `factor.enrolled`.
    func addFactor(_ factor: NewFactor, pendingSince: Date, limit: Int, now: Date) async throws -> Bool

    /// The user's factors, pending and active, oldest first.
    func factors(userID: String) async throws -> [StoredFactor]

    /// Activates the user's pending factor `id` whose code matched at `step` (kept as its last
    /// accepted step). When the user had no active factor, `recoveryCodes` (hashes) become the
    /// user's, replacing any. Records `factor.activated` in the same transaction.
    /// - Returns: `nil` when there is no such pending factor; else whether the codes were stored.
    func activateFactor(
        id: String, userID: String, step: Int64, recoveryCodes: [Data], now: Date
    ) async throws -> Bool?

    /// Counts a wrong code sent to verify the user's pending factor `id`; at `limit` wrong codes the
    /// factor is deleted (its enrolment starts again). Whether it is still there.
    func failFactorVerification(id: String, userID: String, limit: Int) async throws -> Bool

    /// Deletes the user's factor `id`; with the user's last active factor go their recovery codes,
    /// challenges and wait. Records `factor.removed` (active ones only). Whether there was one.
    func removeFactor(id: String, userID: String, now: Date) async throws -> Bool

    /// Deletes every factor of the user, with recovery codes, challenges and wait (an operator's
    /// reset). Records `factor.removed` with `by`. How many there were.
    func removeFactors(userID: String, now: Date, by actor: AuditEvent.Actor) async throws -> Int

    /// Replaces the user's recovery codes with `hashes` when the user has an active factor,
    /// recording `factor.recovery_codes_regenerated`. Whether it did.
    func replaceRecoveryCodes(userID: String, hashes: [Data], now: Date) async throws -> Bool

    /// How many unused recovery codes the user holds.
    func recoveryCodesLeft(userID: String) async throws -> Int

    /// The user ids the user's unused recovery codes were hashed for (`RecoveryCodes.hash`): the
    /// user's own, and that of each account merged into theirs whose codes they kept.
    func recoveryCodeSalts(userID: String) async throws -> [String]

    /// Up to `limit` factors whose secret does not begin with `sealedPrefix` (stored plain, or
    /// sealed under another key-encryption key), in id order, skipping the first `skip` (ones that
    /// could not be opened): what `FactorSecretSealing.resealAll` seals again.
    func factorSecretsToReseal(sealedPrefix: Data, skip: Int, limit: Int) async throws -> [StoredFactor]

    /// Replaces factor `id`'s secret with `sealed` when it still is `old`; whether it did.
    func replaceFactorSecret(id: String, old: Data, with sealed: Data) async throws -> Bool

    /// Stores a step-up challenge of `userID` for `challenge.sessionID`. Refused (`false`) when
    /// that session is not the user's active one or the user has no active factor.
    func createFactorChallenge(_ challenge: NewFactorChallenge, userID: String) async throws -> Bool

    /// The challenge whose hash is `hash`, passed or not.
    func factorChallenge(hash: Data) async throws -> StoredFactorChallenge?

    /// Judges a code sent to a challenge by `Verdicts.factorAttempt` on what is held now, in one
    /// transaction: a `proof` is accepted only when its factor is the user's, active and at a newer
    /// step than the last accepted (stored, so no code is accepted twice, on any node), or its
    /// recovery code is the user's and unused (spent). Passing spends the challenge, resets the
    /// user's failures, carries out `action`, and records `factor.used`; a wrong code counts on the
    /// challenge and the user, and the wait it starts records `factor.locked`.
    func attemptFactorChallenge(
        hash: Data, proof: FactorProof, action: FactorChallengeAction, maximumAttempts: Int, now: Date
    ) async throws -> FactorAttemptOutcome

    // MARK: Data-deletion requests (each decided by `Verdicts`, `DataDeletionVerdicts.swift`)

    /// Receives a provider's data-deletion request. When `Verdicts.deletionRepeat` says the
    /// identity's newest request stands, that one is returned unchanged (its code answers again);
    /// otherwise `request` is stored (received, for `queue`; else in progress, with its
    /// `StoredJob.Kind.dataDeletion` job queued) and `deletion.requested` recorded, in one
    /// transaction. Two concurrent requests for one identity store one.
    func receiveDeletionRequest(_ request: NewDeletionRequest, now: Date) async throws -> StoredDeletionRequest

    /// The request whose confirmation code is `code`, or `nil`.
    func deletionRequest(code: String) async throws -> StoredDeletionRequest?

    /// The request with operator id `id`, or `nil`.
    func deletionRequest(id: String) async throws -> StoredDeletionRequest?

    /// Requests in `status` (any when `nil`), oldest first, at most `limit`.
    func deletionRequests(status: DeletionStatus?, limit: Int) async throws -> [StoredDeletionRequest]

    /// An operator's decision on a received (queued) request: approved, it goes in progress (as
    /// `delete`) with its job queued; refused, it keeps `reason` for its page. Recorded with the
    /// change. A request not waiting for review is returned unchanged.
    /// - Returns: the request after the decision, or `nil` when there is none with `id`.
    func decideDeletionRequest(
        id: String, _ decision: DeletionDecision, now: Date, by actor: AuditEvent.Actor
    ) async throws -> StoredDeletionRequest?

    /// Carries out an in-progress request as `Verdicts.deletion` decides on what is held now (the
    /// user deleted as an account deletion, or the identity removed with the properties its
    /// provider wrote and the sessions it opened ended), marks it done and records
    /// `deletion.done`, in one transaction. Idempotent: a request no longer in progress is returned
    /// unchanged.
    func carryOutDeletionRequest(id: String, now: Date) async throws -> StoredDeletionRequest?

    /// Claims up to `limit` jobs that are due and not leased by another node, leasing them until
    /// `leaseUntil` and counting the attempt. A node that dies mid-job leaves a lease that expires,
    /// and the job runs again elsewhere: jobs must be idempotent.
    func claimJobs(now: Date, leaseUntil: Date, limit: Int) async throws -> [StoredJob]

    /// Ends or reschedules a claimed job (`JobOutcome`), recording its audit event with it.
    func finishJob(id: String, outcome: JobOutcome, now: Date) async throws

    // MARK: Operators (the admin API, the console, `latchkey admin`)

    /// Stores a new admin key and records `admin_key.created` naming `actor`.
    func createAdminKey(_ key: StoredAdminKey, by actor: AuditEvent.Actor) async throws

    /// Every admin key, revoked ones too, newest first.
    func adminKeys() async throws -> [StoredAdminKey]

    /// The admin key `id`, revoked or not, or `nil`.
    func adminKey(id: String) async throws -> StoredAdminKey?

    /// Revokes the admin key `id`, recording `admin_key.revoked` naming `actor`.
    /// - Returns: the key after the change (unchanged when it was already revoked), or `nil`.
    func revokeAdminKey(id: String, now: Date, by actor: AuditEvent.Actor) async throws -> StoredAdminKey?

    /// Records an admin call (`AuditEvent.Kind.adminCall`) and the key's last use, together.
    func recordAdminCall(_ event: AuditEvent, keyID: String, now: Date) async throws

    /// Ends every console session of the admin key `keyID` (a sign-out): its
    /// `StoredAdminKey.consoleGeneration` goes up by one.
    func endConsoleSessions(keyID: String) async throws

    /// Users matching `search`, newest first (ties by id), with identities, at most `limit`; only
    /// those after `cursor` when given. A property search (not indexed) reads at most `scanning`
    /// users after the cursor: when they hold fewer than `limit` matches and more users follow,
    /// `UserSearchPage.resumeAfter` is where the next call goes on.
    func searchUsers(
        _ search: UserSearch, after cursor: UserCursor?, limit: Int, scanning: Int
    ) async throws -> UserSearchPage

    /// Deletes the user `id` as an account deletion does (its revocations queued, a tombstone
    /// recorded naming `actor`), without a session's say: an operator's decision.
    /// - Returns: whether there was such a user.
    func deleteUser(id: String, now: Date, by actor: AuditEvent.Actor) async throws -> Bool

    /// Removes an identity from a user for an operator, as `Verdicts.unlink` allows (never the
    /// last of a full user's): its provider tokens revoked in the background and the sessions it
    /// opened ended, as when its provider asks; the properties stay.
    /// - Throws: `IdentityRefusal` (`notLinked`, `lastSignInMethod`, `sessionEnded` for no user).
    func removeIdentity(userID: String, provider: String, subject: String, now: Date) async throws -> StoredUser

    /// What `/metrics` reports at a scrape: active sessions, open deletion requests, jobs due at
    /// `now`, and the connection pool where there is one. Counted through indexes.
    func gauges(now: Date) async throws -> StoreGauges

    /// Session signing keys, newest first.
    func signingKeys() async throws -> [StoredSigningKey]

    /// Adds a signing key and retires the others at `now`.
    func addSigningKey(_ key: StoredSigningKey) async throws

    /// Adds `key` only if no signing key is stored yet, atomically: of several servers starting
    /// together on an empty database, exactly one adds its key and every one then loads that key.
    /// - Returns: whether `key` was added.
    func addFirstSigningKey(_ key: StoredSigningKey) async throws -> Bool

    /// Replaces the stored private-key material of existing keys (kid → bytes), all in one
    /// transaction: sealing plain keys, or sealing them again under a new key-encryption key.
    func replaceSigningKeyMaterial(_ material: [String: Data]) async throws

    /// Where the store reports its operations' durations (`/metrics`).
    var observation: StoreObservation { get }

    /// Checks the database answers (readiness), within a short deadline of its own (PostgreSQL:
    /// one second at most).
    func ping() async throws
}

extension LatchkeyStore {
    /// `searchUsers` reading as many users as it takes (tests, small databases).
    package func searchUsers(_ search: UserSearch, after cursor: UserCursor?, limit: Int) async throws -> [StoredUser] {
        try await searchUsers(search, after: cursor, limit: limit, scanning: .max).users
    }

    /// The user's newest audit events, at most `limit`.
    package func auditEvents(userID: String, limit: Int) async throws -> [RecordedAuditEvent] {
        try await auditEvents(userID: userID, before: nil, limit: limit)
    }

    /// Rotates with no retry window: presenting a spent token again always revokes the session.
    package func rotateRefreshToken(
        hash: Data, newHash: Data, now: Date, newExpiresAt: Date
    ) async throws
        -> RefreshOutcome
    {
        try await rotateRefreshToken(
            hash: hash, newHash: newHash, now: now, newExpiresAt: newExpiresAt, retryWindow: 0, retryCandidates: [])
    }
}
