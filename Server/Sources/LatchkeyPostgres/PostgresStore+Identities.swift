import Foundation
import LatchkeyAPI
import LatchkeyServer
import PostgresNIO

/// Guests, linking, merging and deleting accounts: each locks the user rows it changes, reads its
/// facts, lets `Verdicts` decide and writes what was decided, in one transaction. The user rows
/// are locked `FOR UPDATE` first: a sign-in under way holds its user's row `FOR SHARE`, so each
/// waits for the other, and an operation that finds the world changed under it reads it again.
extension PostgresStore {
    /// See `LatchkeyStore.createGuest`.
    package func createGuest(id: String, session: NewSession, now: Date) async throws -> StoredUser {
        try await transaction("create guest") { connection in
            try await connection.run(
                """
                INSERT INTO users (id, created_at, updated_at, disabled, properties, anonymous)
                VALUES (\(id), \(now), \(now), false, '{}', true)
                """)
            try await Self.open(session, userID: id, identity: StoredIdentity?.none, connection)
            try await Self.record(AuditEvent(type: .guestCreated, userID: id, detail: [:]), at: now, connection)
            guard let user = try await Self.loadUser(id, connection) else {
                throw PostgresStoreError(operation: "create guest", sqlState: "", message: "the guest vanished")
            }
            return user
        }
    }

    /// See `LatchkeyStore.linkIdentity`. The identity's insert is `ON CONFLICT DO NOTHING`: when another
    /// transaction linked the same identity meanwhile, nothing is written and the link reads again
    /// (it is then that user's, a conflict, or the caller's own).
    package func linkIdentity(_ link: LinkRecord, now: Date) async throws -> LinkOutcome {
        for _ in 0..<4 {
            if let (outcome, held) = try await linkOnce(link, now: now) {
                // Committed: the link is made, and its challenge stored in place of the session.
                if held { throw SecondFactorRequired(userID: link.userID) }
                return outcome
            }
        }
        throw PostgresStoreError(
            operation: "link", sqlState: "", message: "the identity kept changing during the link")
    }

    /// One attempt of `link`; `nil` when a concurrent link of the identity won the insert.
    private func linkOnce(_ link: LinkRecord, now: Date) async throws -> (LinkOutcome, held: Bool)? {
        do {
            return try await linkAttempt(link, now: now)
        } catch is LinkRace {
            return nil
        }
    }

    private func linkAttempt(_ link: LinkRecord, now: Date) async throws -> (LinkOutcome, held: Bool) {
        try await transaction("link") { connection in
            let identity = link.identity
            let user = try await connection.rows(
                "SELECT disabled, properties::text, anonymous FROM users WHERE id = \(link.userID) FOR UPDATE"
            ).first.map { try $0.decode((Bool, String, Bool).self) }
            let owner = try await connection.rows(
                "SELECT user_id FROM identities WHERE provider = \(identity.provider) AND subject = \(identity.subject)"
            ).first.map { try $0.decode(String.self) }
            let spent = try await Self.singleUseFacts(link.singleUse, now: now, connection)
            var recent: Bool?
            if let proving = link.provingSessionID {
                recent = try await Self.isRecent(
                    session: proving, of: link.userID, now: now, window: link.reauthenticationWindow, connection)
            }
            var sibling: (userID: String, name: IdentityName)?
            // Only a link a caller asked for: a sign-in joining by business is the join itself.
            if let token = link.businessToken, link.provingSessionID != nil {
                sibling = try await connection.rows(
                    """
                    SELECT user_id, provider, subject FROM identities
                    WHERE business_token = \(token) AND user_id <> \(link.userID)
                    ORDER BY first_seen, provider, subject LIMIT 1
                    """
                ).first.map { row in
                    let (userID, provider, subject) = try row.decode((String, String, String).self)
                    return (userID, IdentityName(provider: provider, subject: subject))
                }
            }
            let facts = LinkFacts(
                jtiSpent: spent.jti, nonceInvalid: spent.nonce, userExists: user != nil,
                userDisabled: user?.0 ?? false, owner: LinkFacts.Owner(owner, caller: link.userID),
                anonymous: user?.2 ?? false, sessionRecent: recent ?? true,
                businessOwner: sibling == nil ? .nobody : .another)
            let verdict = Verdicts.link(facts)
            switch verdict {
            case .refuse(let refusal): throw refusal
            case .conflict: return (.conflict(owner: owner ?? ""), false)
            case .businessConflict: return (.conflict(owner: sibling?.userID ?? "", through: sibling?.name), false)
            case .touch, .link: break
            }
            let granted = Self.json(identity.grantedPermissions)
            if verdict == .touch {
                try await connection.run(
                    """
                    UPDATE identities SET granted = \(granted)::json, last_seen = \(now), revoked_at = NULL
                    WHERE provider = \(identity.provider) AND subject = \(identity.subject)
                    """)
            } else {
                let inserted = try await connection.rows(
                    """
                    INSERT INTO identities (provider, subject, app_id, user_id, granted, first_seen, last_seen,
                        business_token)
                    VALUES (\(identity.provider), \(identity.subject), \(identity.appID), \(link.userID),
                        \(granted)::json, \(now), \(now), \(link.businessToken))
                    ON CONFLICT (provider, subject) DO NOTHING RETURNING 1
                    """)
                // Rolled back by the caller's loop reading again: nothing of this attempt stays.
                guard !inserted.isEmpty else { throw LinkRace() }
                let properties = StorageRules.propertiesAfterLink(
                    stored: Self.decodeObject(user?.1), mapped: link.mappedProperties
                ).map { Self.json($0) }
                try await connection.run(
                    """
                    UPDATE users SET anonymous = false, properties = COALESCE(\(properties)::json, properties),
                        updated_at = \(now)
                    WHERE id = \(link.userID)
                    """)
                try await Self.record(
                    .identity(linked: true, userID: link.userID, identity: identity), at: now, connection)
            }
            try await Self.spend(link.singleUse, now: now, connection)
            // Only re-proving an identity the user had already is a fresh sign-in: adding a new one
            // proves nothing about who holds this session.
            if verdict == .touch, let proving = link.provingSessionID {
                try await connection.run(
                    "UPDATE sessions SET authenticated_at = \(now) WHERE id = \(proving) AND user_id = \(link.userID)")
            }
            var opening = SessionOpening.open(secondFactor: nil)
            if link.session != nil || link.authorizationCode != nil {
                opening = try await Self.opening(
                    for: link.userID, proven: link.provenSecondFactor, challenge: link.challenge, connection)
            }
            if case .open(let secondFactor) = opening {
                if var session = link.session {
                    session.secondFactor = secondFactor
                    try await Self.open(session, userID: link.userID, identity: link.identity, connection)
                }
                if var code = link.authorizationCode {
                    code.secondFactor = secondFactor
                    try await Self.store(
                        code, userID: link.userID, identity: (link.identity.provider, link.identity.subject), now: now,
                        connection)
                }
            }
            guard let after = try await Self.loadUser(link.userID, connection) else {
                throw IdentityRefusal.sessionEnded
            }
            return (verdict == .touch ? .alreadyLinked(after) : .linked(after), opening == .hold)
        }
    }

    /// See `LatchkeyStore.userID(businessToken:)`.
    package func userID(businessToken token: String) async throws -> String? {
        try await withConnection("user by business token") { connection in
            try await connection.rows(
                "SELECT user_id FROM identities WHERE business_token = \(token) LIMIT 1"
            ).first?.decode(String.self)
        }
    }

    /// See `LatchkeyStore.unlinkIdentity`. The user's row is locked first, so two unlinks of one user's
    /// two identities run one after the other, and the second finds the last one.
    package func unlinkIdentity(
        userID: String, sessionID: String, provider: String, subject: String, now: Date,
        reauthenticationWindow: TimeInterval
    ) async throws -> StoredUser {
        try await transaction("unlink") { connection in
            let exists = try await !connection.rows("SELECT 1 FROM users WHERE id = \(userID) FOR UPDATE").isEmpty
            guard exists, let user = try await Self.loadUser(userID, connection) else {
                throw IdentityRefusal.sessionEnded
            }
            let found = user.identities.first { $0.provider == provider && $0.subject == subject }
            let recent = try await Self.isRecent(
                session: sessionID, of: userID, now: now, window: reauthenticationWindow, connection)
            if let refusal = Verdicts.unlink(
                UnlinkFacts(
                    userExists: true, linked: found != nil, identities: user.identities.count, sessionRecent: recent))
            {
                throw refusal
            }
            guard let found else { throw IdentityRefusal.notLinked }
            // Taken in one statement: a token a parallel sign-in saves meanwhile is either taken
            // (and revoked) or left whole, never forgotten unrevoked.
            let tokens = try await Self.takeProviderTokens(of: [found], connection)
            try await Self.insert(
                StorageRules.revocationJobs(userID: userID, tokens: tokens, at: now), now: now, connection)
            try await connection.run(
                """
                DELETE FROM identities WHERE provider = \(provider) AND subject = \(subject) AND user_id = \(userID)
                """)
            try await connection.run("UPDATE users SET updated_at = \(now) WHERE id = \(userID)")
            try await connection.run(
                """
                UPDATE sessions SET revoked_at = \(now)
                WHERE user_id = \(userID) AND id <> \(sessionID) AND revoked_at IS NULL
                """)
            try await Self.record(.identity(linked: false, userID: userID, identity: found), at: now, connection)
            guard let after = try await Self.loadUser(userID, connection) else { throw IdentityRefusal.sessionEnded }
            return after
        }
    }

    /// See `LatchkeyStore.merge`. Both users' rows are locked in id order (two merges of the same
    /// pair in opposite directions then queue instead of deadlocking).
    package func merge(_ merge: MergeRecord, now: Date) async throws -> StoredUser {
        try await transaction("merge") { connection in
            var rows: [String: (Bool, String)] = [:]
            for id in Set([merge.sourceUserID, merge.targetUserID]).sorted() {
                if let row = try await connection.rows(
                    "SELECT disabled, properties::text FROM users WHERE id = \(id) FOR UPDATE"
                ).first {
                    rows[id] = try row.decode((Bool, String).self)
                }
            }
            guard let target = rows[merge.targetUserID] else { throw IdentityRefusal.sessionEnded }
            let source = rows[merge.sourceUserID]
            let owner = try await connection.rows(
                "SELECT user_id FROM identities WHERE provider = \(merge.provider) AND subject = \(merge.subject)"
            ).first.map { try $0.decode(String.self) }
            let ticketSpent = try await !connection.rows(
                """
                SELECT 1 FROM single_use WHERE kind = 'link_ticket' AND value = \(merge.ticketID)
                    AND expires_at >= \(now)
                """
            ).isEmpty
            let facts = MergeFacts(
                ticketSpent: ticketSpent, sourceExists: source != nil, sourceDisabled: source?.0 ?? false,
                targetOwnsIdentity: owner == merge.targetUserID, sameUser: merge.sourceUserID == merge.targetUserID,
                targetRecent: try await Self.isRecent(
                    session: merge.targetSessionID, of: merge.targetUserID, now: now,
                    window: merge.reauthenticationWindow, connection))
            if let refusal = Verdicts.merge(facts) { throw refusal }
            guard let source else { throw IdentityRefusal.ticketInvalid }
            let sourceFactors = try await connection.rows(
                """
                SELECT id, secret FROM factors WHERE user_id = \(merge.sourceUserID) AND activated_at IS NOT NULL
                FOR UPDATE
                """
            ).map { row in
                let (id, secret) = try row.decode((String, Data).self)
                return (id: id, secret: secret)
            }
            let targetProven = try await connection.rows(
                """
                SELECT second_factor IS NOT NULL FROM sessions
                WHERE id = \(merge.targetSessionID) AND user_id = \(merge.targetUserID)
                """
            ).first.map { try $0.decode(Bool.self) }
            let factors = Verdicts.mergeFactors(
                MergeFactorFacts(
                    sourceHasFactor: !sourceFactors.isEmpty,
                    targetHasFactor: try await Self.activeFactors(of: merge.targetUserID, connection) > 0,
                    targetSessionProven: targetProven ?? false,
                    sourceFactorsResealed: StorageRules.coversExactly(merge.resealedFactors, stored: sourceFactors)))
            switch factors {
            case .stepUp: throw MergeFactorRefusal.stepUp
            case .stale: throw MergeFactorRefusal.stale
            case .dropSource: break
            case .moveSource:
                // See `SQLiteStore.merge`.
                try await connection.run("DELETE FROM recovery_codes WHERE user_id = \(merge.targetUserID)")
                for factor in merge.resealedFactors {
                    try await connection.run(
                        """
                        UPDATE factors SET user_id = \(merge.targetUserID), secret = \(factor.sealed)
                        WHERE id = \(factor.id) AND user_id = \(merge.sourceUserID) AND secret = \(factor.stored)
                        """)
                }
                try await connection.run(
                    """
                    UPDATE recovery_codes SET salt = COALESCE(salt, user_id), user_id = \(merge.targetUserID)
                    WHERE user_id = \(merge.sourceUserID) AND used_at IS NULL
                    """)
            }
            try await connection.run(
                """
                INSERT INTO single_use (kind, value, expires_at) VALUES ('link_ticket', \(merge.ticketID),
                    \(merge.ticketExpiresAt))
                ON CONFLICT (kind, value) DO UPDATE SET expires_at = EXCLUDED.expires_at
                """)
            let moved = try await connection.rows(
                """
                UPDATE identities SET user_id = \(merge.targetUserID) WHERE user_id = \(merge.sourceUserID) RETURNING 1
                """
            ).count
            let properties = Self.json(
                StorageRules.propertiesAfterMerge(
                    target: Self.decodeObject(target.1), source: Self.decodeObject(source.1)))
            try await connection.run(
                """
                UPDATE users SET properties = \(properties)::json, updated_at = \(now) WHERE id = \(merge.targetUserID)
                """)
            // Its history follows its identities, so deleting the merged account later leaves
            // nothing of it behind.
            try await connection.run(
                "UPDATE audit_events SET user_id = \(merge.targetUserID) WHERE user_id = \(merge.sourceUserID)")
            // The merged account's sessions, refresh tokens and codes go with it (the schema's
            // cascades): nothing it issued works any more.
            try await connection.run("DELETE FROM users WHERE id = \(merge.sourceUserID)")
            try await Self.record(
                .merged(
                    from: merge.sourceUserID, into: merge.targetUserID, identities: moved, factors: factors,
                    factorsOfSource: sourceFactors.count), at: now, connection)
            guard let after = try await Self.loadUser(merge.targetUserID, connection) else {
                throw IdentityRefusal.sessionEnded
            }
            return after
        }
    }

    /// See `LatchkeyStore.deleteUser`.
    package func deleteUser(
        id: String, sessionID: String, now: Date, reauthenticationWindow: TimeInterval
    ) async throws {
        try await transaction("delete user") { connection in
            let user = try await connection.rows(
                "SELECT disabled, anonymous FROM users WHERE id = \(id) FOR UPDATE"
            ).first.map { try $0.decode((Bool, Bool).self) }
            let session = try await connection.rows(
                """
                SELECT revoked_at IS NULL, COALESCE(authenticated_at, created_at) FROM sessions
                WHERE id = \(sessionID) AND user_id = \(id)
                """
            ).first.map { try $0.decode((Bool, Date).self) }
            let facts = DeletionFacts(
                sessionActive: user.map { !$0.0 } == true && session?.0 == true, anonymous: user?.1 ?? false,
                secondsSinceSignIn: now.timeIntervalSince(session?.1 ?? .distantPast), window: reauthenticationWindow)
            if let refusal = Verdicts.deletion(facts) { throw refusal }
            guard let stored = try await Self.loadUser(id, connection) else { throw IdentityRefusal.sessionEnded }
            try await Self.delete(stored, by: .user, now: now, connection)
        }
    }

    /// Deletes `user` (its row locked by the caller) as an account deletion does: its revocations
    /// queued (`StorageRules.deletionJobs`), its provider tokens, audit events and the user
    /// (cascading to identities, sessions and codes) gone, and a tombstone recorded.
    static func delete(
        _ user: StoredUser, by actor: AuditEvent.Actor, now: Date, _ connection: PostgresConnection
    ) async throws {
        let tokens = try await takeProviderTokens(of: user.identities, connection)
        try await insert(
            StorageRules.deletionJobs(userID: user.id, identities: user.identities, tokens: tokens, at: now),
            now: now, connection)
        try await connection.run("DELETE FROM audit_events WHERE user_id = \(user.id)")
        try await connection.run("DELETE FROM users WHERE id = \(user.id)")
        try await record(.deleted(userID: user.id, by: actor), at: now, connection)
    }

    /// Queues `jobs`, due now.
    static func insert(_ jobs: [StoredJob], now: Date, _ connection: PostgresConnection) async throws {
        for job in jobs {
            let payload = String(decoding: job.payload.encoded(), as: UTF8.self)
            try await connection.run(
                """
                INSERT INTO jobs (id, kind, user_id, payload, created_at, due_at)
                VALUES (\(job.id), \(job.kind.rawValue), \(job.userID), \(payload)::json, \(now), \(now))
                """)
        }
    }

    /// Forgets the provider tokens stored for `identities`, and returns them (to revoke), each in
    /// one statement.
    static func takeProviderTokens(
        of identities: [StoredIdentity], _ connection: PostgresConnection
    ) async throws -> [StoredProviderToken] {
        var tokens: [StoredProviderToken] = []
        for identity in identities {
            for row in try await connection.rows(
                """
                DELETE FROM provider_tokens WHERE provider = \(identity.provider) AND subject = \(identity.subject)
                RETURNING client_id, token
                """)
            {
                let (clientID, token) = try row.decode((String, Data).self)
                tokens.append(
                    StoredProviderToken(
                        provider: identity.provider, subject: identity.subject, clientID: clientID, token: token))
            }
        }
        return tokens
    }

    /// Forgets the provider tokens stored for `identities`.
    static func deleteProviderTokens(of identities: [StoredIdentity], _ connection: PostgresConnection) async throws {
        for identity in identities {
            try await connection.run(
                "DELETE FROM provider_tokens WHERE provider = \(identity.provider) AND subject = \(identity.subject)")
        }
    }

    /// See `LatchkeyStore.claimJobs`. `SKIP LOCKED`: nodes claiming at once take different jobs.
    package func claimJobs(now: Date, leaseUntil: Date, limit: Int) async throws -> [StoredJob] {
        try await withConnection("claim jobs") { connection in
            try await connection.rows(
                """
                UPDATE jobs SET lease_until = \(leaseUntil), attempts = attempts + 1
                WHERE id IN (
                    SELECT id FROM jobs WHERE due_at <= \(now) AND (lease_until IS NULL OR lease_until <= \(now))
                        AND kind IN (\(unescaped: StoredJob.Kind.sqlList))
                    ORDER BY due_at LIMIT \(max(limit, 0)) FOR UPDATE SKIP LOCKED)
                RETURNING id, kind, user_id, payload::text, attempts
                """
            ).compactMap { row in
                let (id, kind, userID, payload, attempts) = try row.decode((String, String, String, String, Int).self)
                guard let kind = StoredJob.Kind(rawValue: kind) else { return nil }
                return StoredJob(
                    id: id, kind: kind, userID: userID,
                    payload: (try? JSONValue.decode(Data(payload.utf8))) ?? [:], attempts: attempts)
            }
        }
    }

    /// See `LatchkeyStore.finishJob`.
    package func finishJob(id: String, outcome: JobOutcome, now: Date) async throws {
        try await transaction("finish job") { connection in
            switch outcome {
            case .done(let event), .gaveUp(let event):
                let gone = try await connection.rows("DELETE FROM jobs WHERE id = \(id) RETURNING 1")
                // Another node finished it first (its lease had expired): recorded once.
                if !gone.isEmpty, let event { try await Self.record(event, at: now, connection) }
            case .retry(let at, let error):
                try await connection.run(
                    "UPDATE jobs SET due_at = \(at), lease_until = NULL, last_error = \(error) WHERE id = \(id)")
            }
        }
    }

    // MARK: Helpers

    /// Whether `sessionID` is an active session of `userID` that signed in within `window`.
    static func isRecent(
        session sessionID: String, of userID: String, now: Date, window: TimeInterval, _ connection: PostgresConnection
    ) async throws -> Bool {
        let signedIn = try await connection.rows(
            """
            SELECT COALESCE(authenticated_at, created_at) FROM sessions
            WHERE id = \(sessionID) AND user_id = \(userID) AND revoked_at IS NULL
            """
        ).first.map { try $0.decode(Date.self) }
        return StorageRules.isRecent(authenticatedAt: signedIn, now: now, window: window)
    }

    /// Whether the single-use values are already spent (the jti) or not live (the server nonce).
    static func singleUseFacts(
        _ once: SingleUseClaims?, now: Date, _ connection: PostgresConnection
    ) async throws -> (jti: Bool, nonce: Bool) {
        guard let once else { return (false, false) }
        let jti = try await !connection.rows(
            "SELECT 1 FROM single_use WHERE kind = 'jti' AND value = \(once.jti) AND expires_at >= \(now)"
        ).isEmpty
        var nonce = false
        if let value = once.serverNonce {
            nonce = try await connection.rows(
                "SELECT 1 FROM nonces WHERE value = \(value) AND expires_at > \(now) FOR UPDATE"
            ).isEmpty
        }
        return (jti, nonce)
    }

    /// Spends the single-use values inside the caller's transaction. The facts said they are live,
    /// but a concurrent sign-in with the same id token may have spent the jti since the read: the
    /// upsert takes over only an expired record, and a spend that finds none is the replay it is.
    static func spend(_ once: SingleUseClaims?, now: Date, _ connection: PostgresConnection) async throws {
        guard let once else { return }
        let spent = try await connection.rows(
            """
            INSERT INTO single_use (kind, value, expires_at) VALUES ('jti', \(once.jti), \(once.jtiExpiresAt))
            ON CONFLICT (kind, value) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE single_use.expires_at < \(now) RETURNING 1
            """)
        guard !spent.isEmpty else { throw IdentityRefusal.replayed }
        if let nonce = once.serverNonce {
            let deleted = try await connection.rows("DELETE FROM nonces WHERE value = \(nonce) RETURNING 1")
            guard !deleted.isEmpty else { throw IdentityRefusal.nonceInvalid }
        }
    }

    /// Opens a session and its first refresh token inside the caller's transaction, with the
    /// inserts the sign-in statements and a code's redemption use (`sessionInserts`).
    /// `identity` is the one opening it (`nil` for a guest).
    static func open(
        _ session: NewSession, userID: String, identity: StoredIdentity?, _ connection: PostgresConnection
    ) async throws {
        try await open(
            session, userID: userID, identity: identity.map { ($0.provider, $0.subject) }, connection)
    }

    /// Opens a session opened by `identity` (provider, subject), inside the caller's transaction.
    static func open(
        _ session: NewSession, userID: String, identity: (provider: String, subject: String)?,
        _ connection: PostgresConnection
    ) async throws {
        var b = StatementBuilder()
        let inserts = sessionInserts(
            user: b.bind(userID), id: b.bind(session.id), tokenHash: b.bind(session.refreshTokenHash),
            created: b.bind(session.createdAt), expires: b.bind(session.refreshExpiresAt),
            origin: SessionOriginSQL(
                session, provider: b.bind(identity?.provider), subject: b.bind(identity?.subject), &b))
        try await connection.run(b.query("WITH " + inserts.joined(separator: ",\n") + "\nSELECT 1"))
    }

    /// Stores an Easy Login code for `userID` issued to `identity`, inside the caller's transaction.
    static func store(
        _ code: NewAuthorizationCode, userID: String, identity: (provider: String, subject: String), now: Date,
        _ connection: PostgresConnection
    ) async throws {
        try await connection.run(
            """
            INSERT INTO authorization_codes (hash, client_id, redirect_uri, code_challenge, user_id,
                session_id, scope, created_at, expires_at, provider, subject, second_factor)
            VALUES (\(code.hash), \(code.clientID), \(code.redirectURI), \(code.codeChallenge), \(userID),
                \(code.sessionID), \(Self.json(code.scope))::json, \(now), \(code.expiresAt),
                \(identity.provider), \(identity.subject), \(code.secondFactor?.rawValue))
            """)
    }
}

/// A concurrent link inserted the identity first: this attempt is rolled back and read again.
struct LinkRace: Error {}
