import Foundation
import LatchkeyAPI
import LatchkeyServer

/// Guests, linking, merging and deleting accounts: each reads its facts, lets `Verdicts` decide,
/// and writes what was decided, in one transaction (nothing else runs between the read and the
/// writes on SQLite's one connection).
extension SQLiteStore {
    /// See `LatchkeyStore.createGuest`.
    package func createGuest(id: String, session: NewSession, now: Date) async throws -> StoredUser {
        try await transaction { db in
            let stamp = now.timeIntervalSince1970
            try db.execute(
                "INSERT INTO users (id, created_at, updated_at, disabled, properties, anonymous) VALUES (?, ?, ?, 0, '{}', 1)",
                [.text(id), .float(stamp), .float(stamp)])
            try Self.open(session, userID: id, identity: nil, db)
            try Self.record(AuditEvent(type: .guestCreated, userID: id, detail: [:]), at: now, db)
            guard let user = try Self.loadUser(id, db) else { throw SQLiteStoreError.inconsistent }
            return user
        }
    }

    /// See `LatchkeyStore.linkIdentity`.
    package func linkIdentity(_ link: LinkRecord, now: Date) async throws -> LinkOutcome {
        let linked = try await transaction { db -> (outcome: LinkOutcome, held: Bool) in
            let identity = link.identity
            let owner = try db.query(
                "SELECT user_id FROM identities WHERE provider = ? AND subject = ?",
                [.text(identity.provider), .text(identity.subject)]
            ).first?.column("user_id")?.string
            let user = try Self.userRow(link.userID, db)
            let recent = try link.provingSessionID.map {
                try Self.isRecent(session: $0, of: link.userID, now: now, window: link.reauthenticationWindow, db)
            }
            // Only a link a caller asked for: a sign-in joining by business is the join itself.
            let sibling = try link.businessToken.flatMap { link.provingSessionID == nil ? nil : $0 }.flatMap { token in
                try db.query(
                    """
                    SELECT user_id, provider, subject FROM identities WHERE business_token = ? AND user_id != ?
                    ORDER BY first_seen, provider, subject LIMIT 1
                    """, [.text(token), .text(link.userID)]
                ).first.map {
                    (
                        userID: $0.column("user_id")?.string ?? "",
                        name: IdentityName(
                            provider: $0.column("provider")?.string ?? "", subject: $0.column("subject")?.string ?? "")
                    )
                }
            }
            let facts = LinkFacts(
                jtiSpent: try link.singleUse.map { try Self.isSpent(kind: "jti", value: $0.jti, now: now, db) }
                    ?? false,
                nonceInvalid: try link.singleUse?.serverNonce.map { try !Self.nonceIsLive($0, now: now, db) } ?? false,
                userExists: user != nil, userDisabled: user?.disabled ?? false,
                owner: LinkFacts.Owner(owner, caller: link.userID), anonymous: user?.anonymous ?? false,
                sessionRecent: recent ?? true, businessOwner: sibling == nil ? .nobody : .another)
            let verdict = Verdicts.link(facts)
            switch verdict {
            case .refuse(let refusal): throw refusal
            case .conflict: return (.conflict(owner: owner ?? ""), false)
            case .businessConflict: return (.conflict(owner: sibling?.userID ?? "", through: sibling?.name), false)
            case .touch, .link: break
            }
            if let once = link.singleUse {
                _ = try Self.spend(kind: "jti", value: once.jti, expiresAt: once.jtiExpiresAt, now: now, db)
                if let nonce = once.serverNonce { try db.execute("DELETE FROM nonces WHERE value = ?", [.text(nonce)]) }
            }
            let stamp = SQLiteValue.float(now.timeIntervalSince1970)
            if verdict == .touch {
                try db.execute(
                    "UPDATE identities SET granted = ?, last_seen = ?, revoked_at = NULL WHERE provider = ? AND subject = ?",
                    [
                        .text(Self.json(identity.grantedPermissions)), stamp, .text(identity.provider),
                        .text(identity.subject),
                    ])
            } else {
                try db.execute(
                    """
                    INSERT INTO identities (provider, subject, app_id, user_id, granted, first_seen, last_seen,
                        business_token)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .text(identity.provider), .text(identity.subject), .text(identity.appID), .text(link.userID),
                        .text(Self.json(identity.grantedPermissions)), stamp, stamp,
                        .optionalText(link.businessToken),
                    ])
                let properties = StorageRules.propertiesAfterLink(
                    stored: user?.properties ?? [:], mapped: link.mappedProperties)
                try db.execute(
                    "UPDATE users SET anonymous = 0, properties = COALESCE(?, properties), updated_at = ? WHERE id = ?",
                    [properties.map { .text(Self.json($0)) } ?? .null, stamp, .text(link.userID)])
                try Self.record(.identity(linked: true, userID: link.userID, identity: identity), at: now, db)
            }
            // Only re-proving an identity the user had already is a fresh sign-in: adding a new one
            // proves nothing about who holds this session.
            if verdict == .touch, let proving = link.provingSessionID {
                try db.execute(
                    "UPDATE sessions SET authenticated_at = ? WHERE id = ? AND user_id = ?",
                    [stamp, .text(proving), .text(link.userID)])
            }
            var opening = SessionOpening.open(secondFactor: nil)
            if link.session != nil || link.authorizationCode != nil {
                opening = try Self.opening(
                    for: link.userID, proven: link.provenSecondFactor, challenge: link.challenge, db)
            }
            if case .open(let secondFactor) = opening {
                if var session = link.session {
                    session.secondFactor = secondFactor
                    try Self.open(
                        session, userID: link.userID, identity: (link.identity.provider, link.identity.subject), db)
                }
                if var code = link.authorizationCode {
                    code.secondFactor = secondFactor
                    try Self.store(code, userID: link.userID, identity: link.identity, now: now, db)
                }
            }
            guard let after = try Self.loadUser(link.userID, db) else { throw SQLiteStoreError.inconsistent }
            return (verdict == .touch ? .alreadyLinked(after) : .linked(after), opening == .hold)
        }
        if linked.held { throw SecondFactorRequired(userID: link.userID) }
        return linked.outcome
    }

    /// See `LatchkeyStore.userID(businessToken:)`.
    package func userID(businessToken token: String) async throws -> String? {
        try await transaction { db in
            try db.query(
                "SELECT user_id FROM identities WHERE business_token = ? LIMIT 1", [.text(token)]
            ).first?.column("user_id")?.string
        }
    }

    /// See `LatchkeyStore.unlinkIdentity`.
    package func unlinkIdentity(
        userID: String, sessionID: String, provider: String, subject: String, now: Date,
        reauthenticationWindow: TimeInterval
    ) async throws -> StoredUser {
        try await transaction { db in
            guard let user = try Self.loadUser(userID, db) else { throw IdentityRefusal.sessionEnded }
            let found = user.identities.first { $0.provider == provider && $0.subject == subject }
            let recent = try Self.isRecent(session: sessionID, of: userID, now: now, window: reauthenticationWindow, db)
            if let refusal = Verdicts.unlink(
                UnlinkFacts(
                    userExists: true, linked: found != nil, identities: user.identities.count, sessionRecent: recent))
            {
                throw refusal
            }
            guard let found else { throw IdentityRefusal.notLinked }
            let tokens = try Self.takeProviderTokens(of: [found], db)
            try Self.insert(StorageRules.revocationJobs(userID: userID, tokens: tokens, at: now), now: now, db)
            try db.execute(
                "DELETE FROM identities WHERE provider = ? AND subject = ? AND user_id = ?",
                [.text(provider), .text(subject), .text(userID)])
            try db.execute(
                "UPDATE users SET updated_at = ? WHERE id = ?", [.float(now.timeIntervalSince1970), .text(userID)])
            try db.execute(
                "UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND id != ? AND revoked_at IS NULL",
                [.float(now.timeIntervalSince1970), .text(userID), .text(sessionID)])
            try Self.record(.identity(linked: false, userID: userID, identity: found), at: now, db)
            guard let after = try Self.loadUser(userID, db) else { throw SQLiteStoreError.inconsistent }
            return after
        }
    }

    /// See `LatchkeyStore.merge`.
    package func merge(_ merge: MergeRecord, now: Date) async throws -> StoredUser {
        try await transaction { db in
            let owner = try db.query(
                "SELECT user_id FROM identities WHERE provider = ? AND subject = ?",
                [.text(merge.provider), .text(merge.subject)]
            ).first?.column("user_id")?.string
            let source = try Self.userRow(merge.sourceUserID, db)
            guard let target = try Self.userRow(merge.targetUserID, db) else { throw IdentityRefusal.sessionEnded }
            let facts = MergeFacts(
                ticketSpent: try Self.isSpent(kind: "link_ticket", value: merge.ticketID, now: now, db),
                sourceExists: source != nil, sourceDisabled: source?.disabled ?? false,
                targetOwnsIdentity: owner == merge.targetUserID, sameUser: merge.sourceUserID == merge.targetUserID,
                targetRecent: try Self.isRecent(
                    session: merge.targetSessionID, of: merge.targetUserID, now: now,
                    window: merge.reauthenticationWindow, db))
            if let refusal = Verdicts.merge(facts) { throw refusal }
            guard let source else { throw IdentityRefusal.ticketInvalid }
            let sourceFactors = try db.query(
                "SELECT id, secret FROM factors WHERE user_id = ? AND activated_at IS NOT NULL", [.text(source.id)]
            ).map { (id: $0.column("id")?.string ?? "", secret: $0.column("secret")?.blob ?? Data()) }
            let factors = Verdicts.mergeFactors(
                MergeFactorFacts(
                    sourceHasFactor: !sourceFactors.isEmpty,
                    targetHasFactor: try Self.activeFactors(of: target.id, db) > 0,
                    targetSessionProven: try Self.session(merge.targetSessionID, db).map {
                        $0.userID == target.id && $0.assurance.secondFactor != nil
                    } ?? false,
                    sourceFactorsResealed: StorageRules.coversExactly(merge.resealedFactors, stored: sourceFactors)))
            switch factors {
            case .stepUp: throw MergeFactorRefusal.stepUp
            case .stale: throw MergeFactorRefusal.stale
            case .dropSource: break
            case .moveSource:
                // The target has no active factor, so any codes it kept are from none: the
                // source's unused ones replace them, keeping the id they were hashed for.
                try db.execute("DELETE FROM recovery_codes WHERE user_id = ?", [.text(target.id)])
                for factor in merge.resealedFactors {
                    try db.execute(
                        "UPDATE factors SET user_id = ?, secret = ? WHERE id = ? AND user_id = ? AND secret = ?",
                        [
                            .text(target.id), .blob(factor.sealed), .text(factor.id), .text(source.id),
                            .blob(factor.stored),
                        ])
                }
                try db.execute(
                    """
                    UPDATE recovery_codes SET salt = COALESCE(salt, user_id), user_id = ?
                    WHERE user_id = ? AND used_at IS NULL
                    """, [.text(target.id), .text(source.id)])
            }
            _ = try Self.spend(
                kind: "link_ticket", value: merge.ticketID, expiresAt: merge.ticketExpiresAt, now: now, db)
            let stamp = SQLiteValue.float(now.timeIntervalSince1970)
            let moved = try db.query(
                "UPDATE identities SET user_id = ? WHERE user_id = ? RETURNING provider",
                [.text(target.id), .text(source.id)]
            ).count
            let properties = StorageRules.propertiesAfterMerge(target: target.properties, source: source.properties)
            try db.execute(
                "UPDATE users SET properties = ?, updated_at = ? WHERE id = ?",
                [.text(Self.json(properties)), stamp, .text(target.id)])
            // Its history follows its identities, so deleting the merged account later leaves
            // nothing of it behind.
            try db.execute(
                "UPDATE audit_events SET user_id = ? WHERE user_id = ?", [.text(target.id), .text(source.id)])
            // The merged account's sessions, refresh tokens and codes go with it (the schema's
            // cascades): nothing it issued works any more.
            try db.execute("DELETE FROM users WHERE id = ?", [.text(source.id)])
            try Self.record(
                .merged(
                    from: source.id, into: target.id, identities: moved, factors: factors,
                    factorsOfSource: sourceFactors.count), at: now, db)
            guard let after = try Self.loadUser(target.id, db) else { throw SQLiteStoreError.inconsistent }
            return after
        }
    }

    /// See `LatchkeyStore.deleteUser`.
    package func deleteUser(
        id: String, sessionID: String, now: Date, reauthenticationWindow: TimeInterval
    ) async throws {
        try await transaction { db in
            let session = try Self.session(sessionID, db)
            let active = session.map { $0.userID == id && !$0.revoked && !$0.userDisabled } ?? false
            let facts = DeletionFacts(
                sessionActive: active, anonymous: session?.anonymous ?? false,
                secondsSinceSignIn: now.timeIntervalSince1970 - (session?.authenticatedAt ?? 0),
                window: reauthenticationWindow)
            if let refusal = Verdicts.deletion(facts) { throw refusal }
            guard let user = try Self.loadUser(id, db) else { throw IdentityRefusal.sessionEnded }
            try Self.delete(user, by: .user, now: now, db)
        }
    }

    /// Deletes `user` as an account deletion does: its revocations queued
    /// (`StorageRules.deletionJobs`), its provider tokens, audit events and the user (cascading to
    /// identities, sessions and codes) gone, and a tombstone recorded.
    static func delete(_ user: StoredUser, by actor: AuditEvent.Actor, now: Date, _ db: SQLiteConnectionState) throws {
        let tokens = try takeProviderTokens(of: user.identities, db)
        try insert(
            StorageRules.deletionJobs(userID: user.id, identities: user.identities, tokens: tokens, at: now), now: now,
            db)
        try db.execute("DELETE FROM audit_events WHERE user_id = ?", [.text(user.id)])
        try db.execute("DELETE FROM users WHERE id = ?", [.text(user.id)])
        try Self.record(.deleted(userID: user.id, by: actor), at: now, db)
    }

    /// Queues `jobs`, due now.
    static func insert(_ jobs: [StoredJob], now: Date, _ db: SQLiteConnectionState) throws {
        let stamp = SQLiteValue.float(now.timeIntervalSince1970)
        for job in jobs {
            try db.execute(
                "INSERT INTO jobs (id, kind, user_id, payload, created_at, due_at) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    .text(job.id), .text(job.kind.rawValue), .text(job.userID),
                    .text(String(decoding: job.payload.encoded(), as: UTF8.self)), stamp, stamp,
                ])
        }
    }

    /// Forgets the provider tokens stored for `identities`, and returns them (to revoke).
    static func takeProviderTokens(
        of identities: [StoredIdentity], _ db: SQLiteConnectionState
    ) throws
        -> [StoredProviderToken]
    {
        try identities.flatMap { identity in
            try db.query(
                "DELETE FROM provider_tokens WHERE provider = ? AND subject = ? RETURNING client_id, token",
                [.text(identity.provider), .text(identity.subject)]
            ).compactMap { row in
                guard let clientID = row.column("client_id")?.string, let token = row.column("token")?.blob else {
                    return nil
                }
                return StoredProviderToken(
                    provider: identity.provider, subject: identity.subject, clientID: clientID, token: token)
            }
        }
    }

    /// Forgets the provider tokens stored for `identities`.
    static func deleteProviderTokens(of identities: [StoredIdentity], _ db: SQLiteConnectionState) throws {
        for identity in identities {
            try db.execute(
                "DELETE FROM provider_tokens WHERE provider = ? AND subject = ?",
                [.text(identity.provider), .text(identity.subject)])
        }
    }

    /// Whether `sessionID` is an active session of `userID` that signed in within `window`.
    static func isRecent(
        session sessionID: String, of userID: String, now: Date, window: TimeInterval, _ db: SQLiteConnectionState
    ) throws -> Bool {
        guard let session = try Self.session(sessionID, db), session.userID == userID, !session.revoked else {
            return false
        }
        return StorageRules.isRecent(
            authenticatedAt: Date(timeIntervalSince1970: session.authenticatedAt), now: now, window: window)
    }

    /// See `LatchkeyStore.claimJobs`.
    package func claimJobs(now: Date, leaseUntil: Date, limit: Int) async throws -> [StoredJob] {
        try await transaction { db in
            let stamp = SQLiteValue.float(now.timeIntervalSince1970)
            return try db.query(
                """
                UPDATE jobs SET lease_until = ?, attempts = attempts + 1
                WHERE id IN (
                    SELECT id FROM jobs WHERE due_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
                        AND kind IN (\(StoredJob.Kind.sqlList))
                    ORDER BY due_at LIMIT \(max(limit, 0)))
                RETURNING id, kind, user_id, payload, attempts
                """, [.float(leaseUntil.timeIntervalSince1970), stamp, stamp]
            ).compactMap { row in
                guard let id = row.column("id")?.string,
                    let kind = row.column("kind")?.string.flatMap(StoredJob.Kind.init(rawValue:))
                else { return nil }
                return StoredJob(
                    id: id, kind: kind, userID: row.column("user_id")?.string ?? "",
                    payload: (try? JSONValue.decode(Data((row.column("payload")?.string ?? "{}").utf8))) ?? [:],
                    attempts: row.column("attempts")?.integer ?? 1)
            }
        }
    }

    /// See `LatchkeyStore.finishJob`.
    package func finishJob(id: String, outcome: JobOutcome, now: Date) async throws {
        try await transaction { db in
            switch outcome {
            case .done(let event), .gaveUp(let event):
                let gone = try db.query("DELETE FROM jobs WHERE id = ? RETURNING id", [.text(id)])
                // Another node finished it first (its lease had expired): recorded once.
                if !gone.isEmpty, let event { try Self.record(event, at: now, db) }
            case .retry(let at, let error):
                try db.execute(
                    "UPDATE jobs SET due_at = ?, lease_until = NULL, last_error = ? WHERE id = ?",
                    [.float(at.timeIntervalSince1970), .text(error), .text(id)])
            }
        }
    }
}
