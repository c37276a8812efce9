import Foundation
import LatchkeyAPI
import LatchkeyServer

/// The embedded default store: one SQLite file in WAL mode, one connection, every operation a
/// transaction run in submission order (`SQLiteDatabase`), so writes never interleave and nothing
/// is half-written.
///
/// The queries avoid JOIN, and ORDER BY through an index: with this SQLite (3.54) such statements
/// are marked to be compiled again whenever a parameter is re-bound, so the prepared-statement
/// cache would parse and plan them on every request (a tenth of `GET /v1/users/me`'s CPU). Scalar
/// subqueries and sorting in Swift keep each statement prepared once; `SQLiteStatementCacheTests`
/// holds every hot statement to zero re-preparations.
///
/// No request path deletes expired rows: `prune` (in `SQLiteStore+Prune.swift`) does, in short
/// batches, from the server's `PruningService`.
package final class SQLiteStore: LatchkeyStore {
    /// Internal rather than private so tests can inspect the connection's statement cache.
    let database: SQLiteDatabase

    /// A server's lock on the database file, held as long as this store lives (`serving`).
    private let serverLock: SQLiteServerLock?

    /// Opens (creating if needed) the database at `location`.
    /// - Parameter serving: take the file's `SQLiteServerLock` first, as `serve` does, so a second
    ///   server on the same file refuses to start.
    package static func open(_ location: DatabaseLocation, serving: Bool = false) async throws -> SQLiteStore {
        var path: String?
        var lock: SQLiteServerLock?
        if case .sqliteFile(let file) = location {
            try SQLiteFiles.prepare(file)
            if serving { lock = try SQLiteServerLock(databasePath: file) }
            path = file
        }
        do {
            return try await open(path: path, serverLock: lock)
        } catch let failure as SQLiteFailure {
            // SQLite's own words ("file is not a database") do not say which file.
            throw SQLiteOpenError(path: path ?? ":memory:", failure: failure)
        }
    }

    static func open(path: String?, serverLock: SQLiteServerLock?) async throws -> SQLiteStore {
        let database = try await SQLiteDatabase.open(path: path)
        try await database.run { db in
            // temp_store = MEMORY: group commit gives each transaction a savepoint, whose
            // sub-journal would otherwise be a temporary file written on every first touch of a
            // page (a sixth of a sign-in's SQLite time). The WAL checkpoint stays at SQLite's 1000
            // pages: 4000 saved no CPU and doubled the p99 of sign-ins (docs/performance.md).
            for pragma in [
                "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON",
                "PRAGMA busy_timeout = 5000", "PRAGMA temp_store = MEMORY",
            ] {
                try db.execute(pragma)
            }
        }
        return SQLiteStore(database: database, serverLock: serverLock)
    }

    private init(database: SQLiteDatabase, serverLock: SQLiteServerLock?) {
        self.database = database
        self.serverLock = serverLock
    }

    /// Closes the database.
    package func close() async throws { try await database.close() }

    /// Where each transaction's duration and each commit's size are reported (`/metrics`).
    package var observation: StoreObservation { database.observation }

    /// Runs `body` as one transaction on the database's queue; its duration, from submission to
    /// the answer (the queue and the batch's commit included), is the `transaction` operation's.
    func transaction<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnectionState) throws -> T
    ) async throws -> T {
        let context = AuditContext.current
        return try await database.observation.timed("transaction") {
            try await database.transaction { db in
                db.auditContext = context
                return try body(db)
            }
        }
    }

    /// Applies the numbered migrations not yet recorded in `schema_migrations`, in one transaction.
    package func migrate() async throws {
        try await transaction { db in
            try db.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)",
                [])
            let applied = try db.query("SELECT MAX(version) AS version FROM schema_migrations", [])
            let current = applied.first?.column("version")?.integer ?? 0
            // A database migrated by a newer binary is refused rather than half understood: this
            // binary would read and write tables whose meaning it does not know.
            guard current <= SQLiteSchema.migrations.count else {
                throw SQLiteNewerSchema(found: current, known: SQLiteSchema.migrations.count)
            }
            for (index, statements) in SQLiteSchema.migrations.enumerated() where index + 1 > current {
                for statement in statements { try db.execute(statement, []) }
                try db.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    [.integer(index + 1), .float(Date().timeIntervalSince1970)])
            }
        }
    }

    /// The newest migration applied; 0 when there is no `schema_migrations` table.
    package func schemaVersion() async throws -> Int {
        try await transaction { db in
            let table = try db.query(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'", [])
            guard !table.isEmpty else { return 0 }
            let version = try db.query("SELECT MAX(version) AS version FROM schema_migrations", [])
            return version.first?.column("version")?.integer ?? 0
        }
    }

    /// See `LatchkeyStore.signIn`: find-or-create inside `BEGIN IMMEDIATE`, so racing first logins
    /// serialize. The facts are read first and `Verdicts.signIn` decides; only then is anything
    /// written (the transaction is the guard: nothing else runs between the read and the writes).
    package func signIn(_ login: LoginRecord, now: Date) async throws -> (user: StoredUser, created: Bool) {
        let signedIn = try await transaction { db -> (user: StoredUser, created: Bool, held: Bool) in
            let identity = login.identity
            let existing = try db.query(
                """
                SELECT i.user_id, i.app_id, i.first_seen,
                    (SELECT COUNT(*) FROM identities j WHERE j.user_id = i.user_id) AS links
                FROM identities i WHERE i.provider = ? AND i.subject = ?
                """, [.text(identity.provider), .text(identity.subject)])
            let found = try existing.first.flatMap { row in
                try row.column("user_id")?.string.flatMap { try Self.userRow($0, db) }.map { (row, $0) }
            }
            let facts = SignInFacts(
                jtiSpent: try login.singleUse.map { try Self.isSpent(kind: "jti", value: $0.jti, now: now, db) }
                    ?? false,
                nonceInvalid: try login.singleUse?.serverNonce.map { try !Self.nonceIsLive($0, now: now, db) } ?? false,
                userDisabled: found?.1.disabled ?? false, newIdentity: found == nil && login.joinsByBusiness)
            if let refusal = Verdicts.signIn(facts) { throw refusal }
            if let once = login.singleUse {
                _ = try Self.spend(kind: "jti", value: once.jti, expiresAt: once.jtiExpiresAt, now: now, db)
                if let nonce = once.serverNonce {
                    try db.execute("DELETE FROM nonces WHERE value = ?", [.text(nonce)])
                }
            }
            // Dates as a read would return them (seconds since 1970 in a REAL).
            let stamp = Date(timeIntervalSince1970: now.timeIntervalSince1970)
            let userID: String
            let created: Bool
            // The user as it stands after this sign-in, when known without reading it back: a user
            // with this one identity (nearly everyone). Otherwise `loadUser` reads it at the end.
            var signedIn: StoredUser?
            if let (row, stored) = found {
                userID = stored.id
                created = false
                try db.execute(
                    "UPDATE identities SET granted = ?, last_seen = ?, revoked_at = NULL WHERE provider = ? AND subject = ?",
                    [
                        .text(Self.json(identity.grantedPermissions)), .float(now.timeIntervalSince1970),
                        .text(identity.provider), .text(identity.subject),
                    ])
                var user = stored
                // A returning person's profile rarely changes: no write (and no WAL page) then.
                if let merged = StorageRules.propertiesAfterSignIn(stored: stored.properties, login: login) {
                    try db.execute(
                        "UPDATE users SET properties = ?, updated_at = ? WHERE id = ?",
                        [.text(Self.json(merged)), .float(now.timeIntervalSince1970), .text(userID)])
                    user.properties = merged
                    user.updatedAt = stamp
                }
                if row.column("links")?.integer == 1 {
                    user.identities = [
                        StorageRules.signedInIdentity(
                            login, appID: row.column("app_id")?.string ?? "",
                            firstSeen: Date(timeIntervalSince1970: row.column("first_seen")?.double ?? 0), at: stamp)
                    ]
                    signedIn = user
                }
            } else {
                userID = login.newUserID
                created = true
                try db.execute(
                    "INSERT INTO users (id, created_at, updated_at, disabled, properties) VALUES (?, ?, ?, 0, ?)",
                    [
                        .text(userID), .float(now.timeIntervalSince1970), .float(now.timeIntervalSince1970),
                        .text(Self.json(login.mappedProperties)),
                    ])
                try db.execute(
                    """
                    INSERT INTO identities (provider, subject, app_id, user_id, granted, first_seen, last_seen,
                        business_token)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .text(identity.provider), .text(identity.subject), .text(identity.appID), .text(userID),
                        .text(Self.json(identity.grantedPermissions)), .float(now.timeIntervalSince1970),
                        .float(now.timeIntervalSince1970), .optionalText(login.businessToken),
                    ])
                signedIn = StorageRules.createdUser(login, id: userID, at: stamp)
            }
            // A new user has no factor yet; a returning one's may hold the session back.
            var held = false
            if login.session != nil || login.authorizationCode != nil, !created {
                held = try Self.opening(for: userID, proven: nil, challenge: login.challenge, db) == .hold
            }
            if !held, let session = login.session {
                try Self.open(session, userID: userID, identity: (identity.provider, identity.subject), db)
            }
            if !held, let code = login.authorizationCode {
                try Self.store(code, userID: userID, identity: login.identity, now: now, db)
            }
            try Self.record(StorageRules.signInEvent(login, userID: userID, created: created), at: now, db)
            guard let user = try signedIn ?? Self.loadUser(userID, db) else { throw SQLiteStoreError.inconsistent }
            return (user, created, held)
        }
        if signedIn.held { throw SecondFactorRequired(userID: signedIn.user.id) }
        return (signedIn.user, signedIn.created)
    }

    /// The user with identities, or `nil`.
    package func user(id: String) async throws -> StoredUser? {
        try await transaction { db in try Self.loadUser(id, db) }
    }

    /// Merges properties; `.null` removes a key.
    package func updateProperties(
        userID: String, properties: [String: JSONValue], now: Date
    ) async throws -> StoredUser? {
        try await transaction { db in
            guard try Self.loadUser(userID, db) != nil else { return nil }
            let current = StorageRules.propertiesAfterUpdate(
                current: try Self.properties(of: userID, db), changes: properties)
            try db.execute(
                "UPDATE users SET properties = ?, updated_at = ? WHERE id = ?",
                [.text(Self.json(current)), .float(now.timeIntervalSince1970), .text(userID)])
            return try Self.loadUser(userID, db)
        }
    }

    /// The session a refresh token belongs to and whether it was spent, by its primary key.
    package func refreshTokenFamily(hash: Data) async throws -> RefreshTokenFamily? {
        try await transaction { db in
            guard
                let row = try db.query(
                    """
                    SELECT r.session_id, r.used_at, s.revoked_at FROM refresh_tokens r
                    JOIN sessions s ON s.id = r.session_id WHERE r.hash = ?
                    """, [.blob(hash)]
                ).first,
                let sessionID = row.column("session_id")?.string
            else { return nil }
            return RefreshTokenFamily(
                sessionID: sessionID, spent: row.column("used_at")?.isNull == false,
                ended: row.column("revoked_at")?.isNull == false)
        }
    }

    /// Spends a refresh token; a spent one revokes its session (reuse detection) unless it is a
    /// retry within the window (see `LatchkeyStore.rotateRefreshToken`).
    package func rotateRefreshToken(
        hash: Data, newHash: Data, now: Date, newExpiresAt: Date, retryWindow: TimeInterval, retryCandidates: [Data]
    ) async throws
        -> RefreshOutcome
    {
        try await transaction { db in
            guard
                let read = try Self.refreshFacts(
                    hash: hash, now: now, retryWindow: retryWindow,
                    retryCandidates: retryCandidates, db)
            else { return .invalid }
            let verdict = Verdicts.refresh(read.facts)
            switch verdict {
            case .invalid, .retry, .refuseSuperseded: break
            case .retryLate:
                if let successor = read.successor {
                    try db.execute(
                        "UPDATE refresh_tokens SET reissued_at = COALESCE(reissued_at, ?) WHERE hash = ?",
                        [.float(now.timeIntervalSince1970), .blob(successor)])
                }
            case .revokeReused, .revokeDisabled:
                try db.execute(
                    "UPDATE sessions SET revoked_at = ? WHERE id = ?",
                    [.float(now.timeIntervalSince1970), .text(read.sessionID)])
                if verdict == .revokeReused {
                    try Self.record(
                        AuditEvent(
                            type: .refreshTokenReused, userID: read.userID,
                            detail: ["session_id": .string(read.sessionID)]), at: now, db)
                }
            case .rotate:
                try db.execute(
                    "UPDATE refresh_tokens SET used_at = ?, successor_hash = ? WHERE hash = ?",
                    [.float(now.timeIntervalSince1970), .blob(newHash), .blob(hash)])
                try db.execute(
                    "INSERT INTO refresh_tokens (hash, session_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                    [
                        .blob(newHash), .text(read.sessionID), .float(now.timeIntervalSince1970),
                        .float(newExpiresAt.timeIntervalSince1970),
                    ])
                // The new token is the session's only unspent one: the session lives as long as it does.
                try db.execute(
                    "UPDATE sessions SET expires_at = ?, refreshed_at = ? WHERE id = ?",
                    [
                        .float(newExpiresAt.timeIntervalSince1970), .float(now.timeIntervalSince1970),
                        .text(read.sessionID),
                    ])
            }
            return verdict.outcome(
                sessionID: read.sessionID, userID: read.userID, successor: read.successor, anonymous: read.anonymous,
                assurance: read.assurance)
        }
    }

    /// What `Verdicts.refresh` decides on for the token `hash`; `nil` for a token never issued.
    private static func refreshFacts(
        hash: Data, now: Date, retryWindow: TimeInterval, retryCandidates: [Data], _ db: SQLiteConnectionState
    ) throws -> (
        facts: RefreshFacts, sessionID: String, userID: String, successor: Data?, anonymous: Bool,
        assurance: SessionAssurance
    )? {
        guard
            let row = try db.query(
                "SELECT session_id, expires_at, used_at, successor_hash, reissued_at FROM refresh_tokens WHERE hash = ?",
                [.blob(hash)]
            ).first,
            let sessionID = row.column("session_id")?.string,
            let session = try Self.session(sessionID, db)
        else { return nil }
        let usedAt = row.column("used_at")?.double.map(Date.init(timeIntervalSince1970:))
        let successor = row.column("successor_hash")?.blob
        var facts = RefreshFacts(
            sessionEnded: session.revoked, spent: usedAt != nil,
            expired: (row.column("expires_at")?.double ?? 0) <= now.timeIntervalSince1970,
            userDisabled: session.userDisabled)
        facts.reissued = row.column("reissued_at")?.double != nil
        if let usedAt, let successor {
            facts.noteSpend(
                at: usedAt, successor: successor, now: now, window: retryWindow, candidates: retryCandidates)
            if facts.successorNamed,
                let next = try db.query(
                    "SELECT used_at IS NOT NULL AS spent, expires_at FROM refresh_tokens WHERE hash = ?",
                    [.blob(successor)]
                ).first
            {
                facts.successorSpent = next.column("spent")?.integer == 1
                facts.successorLive =
                    !facts.successorSpent && (next.column("expires_at")?.double ?? 0) > now.timeIntervalSince1970
            }
        }
        return (facts, sessionID, session.userID, successor, session.anonymous, session.assurance)
    }

    /// Disables or re-enables a user; disabling also revokes every active session.
    package func setUserDisabled(
        id: String, disabled: Bool, now: Date, by actor: AuditEvent.Actor
    ) async throws -> Int? {
        try await transaction { db in
            let updated = try db.query(
                "UPDATE users SET disabled = ?, updated_at = ? WHERE id = ? RETURNING id",
                [.integer(disabled ? 1 : 0), .float(now.timeIntervalSince1970), .text(id)])
            guard !updated.isEmpty else { return nil }
            let ended = disabled ? try Self.revokeSessions(of: id, now: now, db) : 0
            try Self.record(
                .userState(disabled: disabled, userID: id, by: actor, sessionsEnded: ended), at: now, db)
            return ended
        }
    }

    /// The user of an active session, in one transaction.
    package func activeUser(id: String, sessionID: String) async throws -> StoredUser? {
        try await transaction { db in
            guard let session = try Self.session(sessionID, db), session.userID == id, !session.revoked,
                !session.userDisabled
            else { return nil }
            return try Self.loadUser(id, db)
        }
    }

    /// Whether the session exists, is not revoked, and its user is not disabled.
    package func isSessionActive(id: String) async throws -> Bool {
        try await transaction { db in
            guard let session = try Self.session(id, db) else { return false }
            return !session.revoked && !session.userDisabled
        }
    }

    /// See `LatchkeyStore.sessionProof`. One read, as PostgreSQL's: a missing user reads as
    /// disabled, as in `session(_:_:)`.
    package func sessionProof(id: String, now: Date) async throws -> SessionProof? {
        try await transaction { db in
            guard
                let row = try db.query(
                    """
                    SELECT s.user_id, s.revoked_at IS NULL AND s.expires_at > ? AND COALESCE(u.disabled = 0, 0) AS active,
                        COALESCE(u.anonymous, 0) AS anonymous, s.created_at,
                        COALESCE(s.authenticated_at, s.created_at) AS authenticated_at, s.stepped_up_at, s.second_factor
                    FROM sessions s LEFT JOIN users u ON u.id = s.user_id WHERE s.id = ?
                    """, [.float(now.timeIntervalSince1970), .text(id)]
                ).first, let userID = row.column("user_id")?.string
            else { return nil }
            let date = { (name: String) in row.column(name)?.double.map(Date.init(timeIntervalSince1970:)) }
            return SessionProof(
                userID: userID, active: row.column("active")?.integer == 1,
                anonymous: row.column("anonymous")?.integer == 1, createdAt: date("created_at") ?? .distantPast,
                authenticatedAt: date("authenticated_at") ?? .distantPast, steppedUpAt: date("stepped_up_at"),
                secondFactor: row.column("second_factor")?.string.flatMap(SecondFactorKind.init(rawValue:)))
        }
    }

    /// Revokes one session; `true` if it was active.
    package func revokeSession(id: String, now: Date) async throws -> Bool {
        try await transaction { db in
            let rows = try db.query(
                "UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING id",
                [.float(now.timeIntervalSince1970), .text(id)])
            return !rows.isEmpty
        }
    }

    /// Revokes every active session of a user; returns how many.
    package func revokeSessions(userID: String, now: Date, by actor: AuditEvent.Actor) async throws -> Int {
        try await transaction { db in
            let ended = try Self.revokeSessions(of: userID, now: now, db)
            if try Self.userRow(userID, db) != nil {
                try Self.record(.sessionsRevoked(userID: userID, by: actor, sessionsEnded: ended), at: now, db)
            }
            return ended
        }
    }

    /// The user's audit events, newest first.
    package func auditEvents(userID: String, before: Int64?, limit: Int) async throws -> [RecordedAuditEvent] {
        try await transaction { db in
            try db.query(
                """
                SELECT id, at, type, detail, node, client_address, user_agent FROM audit_events
                WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?
                """,
                [.text(userID), .integer(Int(before ?? .max)), .integer(limit)]
            ).compactMap { row in
                // A kind this version does not know (written by a newer one) is left out.
                guard let kind = row.column("type")?.string.flatMap(AuditEvent.Kind.init(rawValue:)) else {
                    return nil
                }
                let detail = (try? JSONValue.decode(Data((row.column("detail")?.string ?? "{}").utf8))) ?? .object([:])
                return RecordedAuditEvent(
                    AuditEvent(type: kind, userID: userID, detail: detail),
                    at: Date(timeIntervalSince1970: row.column("at")?.double ?? 0),
                    id: Int64(row.column("id")?.integer ?? 0),
                    context: AuditContext(
                        node: row.column("node")?.string,
                        client: ClientInfo(
                            address: row.column("client_address")?.string,
                            userAgent: row.column("user_agent")?.string)))
            }
        }
    }

    /// Revokes the user's active sessions inside the caller's transaction; how many.
    static func revokeSessions(of userID: String, now: Date, _ db: SQLiteConnectionState) throws -> Int {
        try db.query(
            "UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL RETURNING id",
            [.float(now.timeIntervalSince1970), .text(userID)]
        ).count
    }

    /// Writes `event` to the audit log inside the caller's transaction.
    /// The row says where the event came from (`db.auditContext`).
    static func record(_ event: AuditEvent, at now: Date, _ db: SQLiteConnectionState) throws {
        let context = db.auditContext
        try db.execute(
            """
            INSERT INTO audit_events (at, type, user_id, detail, node, client_address, user_agent)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .float(now.timeIntervalSince1970), .text(event.type.rawValue),
                event.userID.isEmpty ? .null : .text(event.userID),
                .text(String(decoding: context.detail(of: event).encoded(), as: UTF8.self)),
                .optionalText(context.node),
                .optionalText(context.client.address), .optionalText(context.client.userAgent),
            ])
    }

    /// Records a single-use value; `false` on replay.
    package func useOnce(kind: String, value: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await transaction { db in try Self.spend(kind: kind, value: value, expiresAt: expiresAt, now: now, db)
        }
    }

    /// Records a single-use value inside the caller's transaction; `false` when already recorded
    /// and not yet expired.
    ///
    /// An expired record left for `prune` is taken over as if it were absent (the upsert's `WHERE`),
    /// exactly as when sign-ins deleted expired records first. It could only matter to a value whose
    /// token has expired too (a `jti` is recorded until its id token's `exp` plus the clock skew),
    /// which the verifier refuses before the store is asked; the upsert makes that independent of
    /// callers, at no cost to a sign-in, which no longer deletes anything.
    static func spend(
        kind: String, value: String, expiresAt: Date, now: Date, _ db: SQLiteConnectionState
    )
        throws -> Bool
    {
        let rows = try db.query(
            """
            INSERT INTO single_use (kind, value, expires_at) VALUES (?, ?, ?)
            ON CONFLICT (kind, value) DO UPDATE SET expires_at = excluded.expires_at WHERE single_use.expires_at < ?
            RETURNING value
            """,
            [.text(kind), .text(value), .float(expiresAt.timeIntervalSince1970), .float(now.timeIntervalSince1970)])
        return !rows.isEmpty
    }

    /// Whether `value` of `kind` is recorded as used and the record has not expired (what
    /// `spend` would refuse).
    static func isSpent(kind: String, value: String, now: Date, _ db: SQLiteConnectionState) throws -> Bool {
        try !db.query(
            "SELECT 1 FROM single_use WHERE kind = ? AND value = ? AND expires_at >= ?",
            [.text(kind), .text(value), .float(now.timeIntervalSince1970)]
        ).isEmpty
    }

    /// Whether a server-issued nonce is stored and unexpired (unconsumed: a sign-in deletes it).
    static func nonceIsLive(_ nonce: String, now: Date, _ db: SQLiteConnectionState) throws -> Bool {
        try !db.query(
            "SELECT 1 FROM nonces WHERE value = ? AND expires_at > ?",
            [.text(nonce), .float(now.timeIntervalSince1970)]
        ).isEmpty
    }

    /// Stores an Easy Login request unless `limit` unexpired ones are waiting. Expired requests
    /// never count (they stay an hour for a late return from Facebook to reach its app with an
    /// error, and must not lock Easy Login meanwhile); the count reads the expiry index.
    package func savePendingAuthorization(
        _ request: PendingAuthorization, now: Date, limit: Int
    ) async throws
        -> Bool
    {
        let encoded = try JSONEncoder().encode(request)
        return try await transaction { db in
            let waiting = try db.query(
                "SELECT COUNT(*) AS n FROM pending_authorizations WHERE expires_at > ?",
                [.float(now.timeIntervalSince1970)])
            guard (waiting.first?.column("n")?.integer ?? 0) < limit else { return false }
            try db.execute(
                "INSERT INTO pending_authorizations (handle_hash, request, expires_at) VALUES (?, ?, ?)",
                [
                    .blob(request.handleHash), .text(String(decoding: encoded, as: UTF8.self)),
                    .float(request.expiresAt.timeIntervalSince1970),
                ])
            return true
        }
    }

    /// Deletes and returns the request: a state value completes at most one flow.
    package func takePendingAuthorization(handleHash: Data) async throws -> PendingAuthorization? {
        let text = try await transaction { db in
            try db.query(
                "DELETE FROM pending_authorizations WHERE handle_hash = ? RETURNING request",
                [.blob(handleHash)]
            ).first?.column("request")?.string
        }
        return try text.map { try JSONDecoder().decode(PendingAuthorization.self, from: Data($0.utf8)) }
    }

    /// Spends the code and opens its session, or reports why not; a second redemption revokes the
    /// session the first one opened.
    package func redeemAuthorizationCode(
        _ presentation: CodePresentation, session: NewSession, now: Date
    ) async throws
        -> CodeRedemption
    {
        try await transaction { db in
            let hash = SQLiteValue.blob(presentation.hash)
            guard
                let row = try db.query(
                    """
                    SELECT c.client_id, c.redirect_uri, c.code_challenge, c.user_id, c.session_id, c.scope,
                        c.expires_at, c.used_at, c.redeemed, (SELECT disabled FROM users WHERE id = c.user_id) AS disabled,
                        c.provider, c.subject, c.second_factor
                    FROM authorization_codes c WHERE c.hash = ?
                    """, [hash]
                ).first, let userID = row.column("user_id")?.string,
                let sessionID = row.column("session_id")?.string
            else { return .invalid }
            let stored = StoredAuthorizationCode(
                clientID: row.column("client_id")?.string ?? "", redirectURI: row.column("redirect_uri")?.string ?? "",
                codeChallenge: row.column("code_challenge")?.string ?? "",
                expiresAt: Date(timeIntervalSince1970: row.column("expires_at")?.double ?? 0),
                userDisabled: row.column("disabled")?.integer == 1, spent: row.column("used_at")?.isNull == false,
                redeemed: row.column("redeemed")?.integer == 1)
            let verdict = Verdicts.code(stored, presentation: presentation, now: now)
            switch verdict {
            case .ignore: return .invalid
            case .revokeSession:
                try db.execute(
                    "UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                    [.float(now.timeIntervalSince1970), .text(sessionID)])
                return .reused
            case .redeem, .refuse:
                try db.execute(
                    "UPDATE authorization_codes SET used_at = ?, redeemed = ? WHERE hash = ?",
                    [.float(now.timeIntervalSince1970), .integer(verdict == .redeem ? 1 : 0), hash])
            }
            if case .refuse(let refusal) = verdict { return refusal }
            var opened = session
            opened.id = sessionID
            opened.secondFactor = row.column("second_factor")?.string.flatMap(SecondFactorKind.init(rawValue:))
            // The identity the code was issued to opens it.
            let identity = row.column("provider")?.string.flatMap { provider in
                row.column("subject")?.string.map { (provider, $0) }
            }
            try Self.open(opened, userID: userID, identity: identity, db)
            let scope =
                (try? JSONValue.decode(Data((row.column("scope")?.string ?? "[]").utf8)))?.arrayValue?
                .compactMap(\.stringValue) ?? []
            return .issued(sessionID: sessionID, userID: userID, scope: scope, secondFactor: opened.secondFactor)
        }
    }

    /// Stores a server-issued nonce. Expired ones are left to `prune` (a sign-in consumes only
    /// unexpired nonces), so issuing one, which anyone may do, costs one insert.
    package func storeNonce(_ nonce: String, expiresAt: Date, now: Date) async throws {
        try await transaction { db in
            try db.execute(
                "INSERT INTO nonces (value, expires_at) VALUES (?, ?)",
                [.text(nonce), .float(expiresAt.timeIntervalSince1970)])
        }
    }

    /// Session signing keys, newest first.
    package func signingKeys() async throws -> [StoredSigningKey] {
        try await transaction { db in
            try db.query(
                "SELECT kid, private_key, created_at, retired_at FROM signing_keys ORDER BY created_at DESC", []
            ).compactMap { row in
                guard let kid = row.column("kid")?.string, let blob = row.column("private_key")?.blob,
                    let created = row.column("created_at")?.double
                else { return nil }
                return StoredSigningKey(
                    kid: kid, privateKey: blob, createdAt: Date(timeIntervalSince1970: created),
                    retiredAt: row.column("retired_at")?.double.map(Date.init(timeIntervalSince1970:)))
            }
        }
    }

    /// Adds a key and retires the current ones, in one transaction.
    package func addSigningKey(_ key: StoredSigningKey) async throws {
        try await transaction { db in
            try db.execute(
                "UPDATE signing_keys SET retired_at = ? WHERE retired_at IS NULL",
                [.float(key.createdAt.timeIntervalSince1970)])
            try db.execute(
                "INSERT INTO signing_keys (kid, private_key, created_at) VALUES (?, ?, ?)",
                [.text(key.kid), .blob(key.privateKey), .float(key.createdAt.timeIntervalSince1970)])
        }
    }

    /// Adds the first key, in one write transaction (SQLite runs one at a time).
    package func addFirstSigningKey(_ key: StoredSigningKey) async throws -> Bool {
        try await transaction { db in
            guard try db.query("SELECT 1 FROM signing_keys LIMIT 1", []).isEmpty else { return false }
            try db.execute(
                "INSERT INTO signing_keys (kid, private_key, created_at) VALUES (?, ?, ?)",
                [.text(key.kid), .blob(key.privateKey), .float(key.createdAt.timeIntervalSince1970)])
            return true
        }
    }

    /// Replaces key material, all keys in one transaction.
    package func replaceSigningKeyMaterial(_ material: [String: Data]) async throws {
        try await transaction { db in
            for (kid, bytes) in material {
                try db.execute("UPDATE signing_keys SET private_key = ? WHERE kid = ?", [.blob(bytes), .text(kid)])
            }
        }
    }

    /// Runs `SELECT 1` (readiness).
    package func ping() async throws {
        try await transaction { db in try db.execute("SELECT 1", []) }
    }

    // MARK: Helpers

    /// Inserts a session and its first refresh token, inside the caller's transaction; the session
    /// expires with that token until a rotation renews both.
    /// `identity` is the one opening it (`nil` for a guest).
    static func open(
        _ session: NewSession, userID: String, identity: (provider: String, subject: String)?,
        _ db: SQLiteConnectionState
    ) throws {
        try db.execute(
            """
            INSERT INTO sessions (id, user_id, created_at, expires_at, method, provider, subject, client_address,
                user_agent, second_factor)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(session.id), .text(userID), .float(session.createdAt.timeIntervalSince1970),
                .float(session.refreshExpiresAt.timeIntervalSince1970), .text(session.method.rawValue),
                .optionalText(identity?.provider), .optionalText(identity?.subject),
                .optionalText(session.client.address), .optionalText(session.client.userAgent),
                .optionalText(session.secondFactor?.rawValue),
            ])
        try db.execute(
            "INSERT INTO refresh_tokens (hash, session_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
            [
                .blob(session.refreshTokenHash), .text(session.id),
                .float(session.createdAt.timeIntervalSince1970),
                .float(session.refreshExpiresAt.timeIntervalSince1970),
            ])
    }

    /// Stores an Easy Login authorization code for `userID`, inside the caller's transaction.
    /// The code keeps `identity`, which the session its redemption opens records.
    static func store(
        _ code: NewAuthorizationCode, userID: String, identity: StoredIdentity, now: Date, _ db: SQLiteConnectionState
    ) throws {
        try store(code, userID: userID, identity: (identity.provider, identity.subject), now: now, db)
    }

    /// Stores an Easy Login authorization code for `userID` issued to `identity`, inside the
    /// caller's transaction.
    static func store(
        _ code: NewAuthorizationCode, userID: String, identity: (provider: String, subject: String), now: Date,
        _ db: SQLiteConnectionState
    ) throws {
        try db.execute(
            """
            INSERT INTO authorization_codes
                (hash, client_id, redirect_uri, code_challenge, user_id, session_id, scope, created_at, expires_at,
                provider, subject, second_factor)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .blob(code.hash), .text(code.clientID), .text(code.redirectURI),
                .text(code.codeChallenge), .text(userID), .text(code.sessionID), .text(Self.json(code.scope)),
                .float(now.timeIntervalSince1970), .float(code.expiresAt.timeIntervalSince1970),
                .text(identity.provider), .text(identity.subject), .optionalText(code.secondFactor?.rawValue),
            ])
    }

    /// A session's owner and state, whether that user is disabled or a guest, when it last signed
    /// in, and how it was authenticated.
    static func session(
        _ id: String, _ db: SQLiteConnectionState
    ) throws -> (
        userID: String, revoked: Bool, userDisabled: Bool, anonymous: Bool, authenticatedAt: Double,
        assurance: SessionAssurance
    )? {
        guard
            let row = try db.query(
                """
                SELECT s.user_id, s.revoked_at, COALESCE(s.authenticated_at, s.created_at) AS authenticated_at,
                    s.method, s.second_factor,
                    (SELECT disabled + 2 * anonymous FROM users WHERE id = s.user_id) AS flags
                FROM sessions s WHERE s.id = ?
                """, [.text(id)]
            ).first, let userID = row.column("user_id")?.string
        else { return nil }
        // One subquery for both of the user's flags (disabled, anonymous); a missing user reads
        // as disabled, as before.
        let flags = row.column("flags")?.integer
        return (
            userID, row.column("revoked_at")?.isNull == false, flags.map { $0 & 1 != 0 } ?? true,
            (flags ?? 0) & 2 != 0, row.column("authenticated_at")?.double ?? 0,
            SessionAssurance(
                method: row.column("method")?.string.flatMap(SessionMethod.init(rawValue:)),
                secondFactor: row.column("second_factor")?.string.flatMap(SecondFactorKind.init(rawValue:)))
        )
    }

    /// The user with its identities, or `nil`.
    static func loadUser(_ id: String, _ db: SQLiteConnectionState) throws -> StoredUser? {
        guard var user = try userRow(id, db) else { return nil }
        // Sorted here rather than by ORDER BY: see the type's comment.
        user.identities = try db.query(
            "SELECT provider, subject, app_id, granted, first_seen, last_seen FROM identities WHERE user_id = ?",
            [.text(id)]
        ).map { row in
            StoredIdentity(
                provider: row.column("provider")?.string ?? "", subject: row.column("subject")?.string ?? "",
                appID: row.column("app_id")?.string ?? "",
                grantedPermissions: (try? JSONValue.decode(Data((row.column("granted")?.string ?? "[]").utf8)))?
                    .arrayValue?.compactMap(\.stringValue) ?? [],
                firstSeen: Date(timeIntervalSince1970: row.column("first_seen")?.double ?? 0),
                lastSeen: Date(timeIntervalSince1970: row.column("last_seen")?.double ?? 0))
        }.sorted { ($0.firstSeen, $0.provider, $0.subject) < ($1.firstSeen, $1.provider, $1.subject) }
        return user
    }

    /// The user's own row, without identities, or `nil`.
    static func userRow(_ id: String, _ db: SQLiteConnectionState) throws -> StoredUser? {
        guard
            let row = try db.query(
                "SELECT id, created_at, updated_at, disabled, properties, anonymous FROM users WHERE id = ?",
                [.text(id)]
            ).first,
            let created = row.column("created_at")?.double, let updated = row.column("updated_at")?.double
        else { return nil }
        return StoredUser(
            id: id, createdAt: Date(timeIntervalSince1970: created), updatedAt: Date(timeIntervalSince1970: updated),
            disabled: row.column("disabled")?.integer == 1,
            properties: Self.decodeProperties(row.column("properties")?.string), identities: [],
            anonymous: row.column("anonymous")?.integer == 1)
    }

    static func properties(of userID: String, _ db: SQLiteConnectionState) throws -> [String: JSONValue] {
        decodeProperties(
            try db.query("SELECT properties FROM users WHERE id = ?", [.text(userID)]).first?.column(
                "properties")?
                .string)
    }

    static func decodeProperties(_ text: String?) -> [String: JSONValue] {
        text.flatMap { try? JSONValue.decode(Data($0.utf8)) }?.objectValue ?? [:]
    }

    static func json(_ value: [String: JSONValue]) -> String {
        String(decoding: JSONValue.object(value).encoded(), as: UTF8.self)
    }

    static func json(_ values: [String]) -> String {
        String(decoding: JSONValue.array(values.map(JSONValue.string)).encoded(), as: UTF8.self)
    }
}

/// A database state that should be impossible (a row vanished inside its own transaction).
enum SQLiteStoreError: Error, Sendable {
    case inconsistent
}

/// The database file exists but SQLite cannot use it (not a database, corrupt, locked).
struct SQLiteOpenError: Error, Sendable, CustomStringConvertible {
    let path: String
    let failure: SQLiteFailure
    var description: String {
        "cannot open the database \(DatabaseLocation.redacted(path)): \(failure.message) (SQLite error \(failure.code))"
    }
}

/// The database was migrated by a newer Latchkey than this one.
struct SQLiteNewerSchema: Error, Sendable, CustomStringConvertible {
    let found: Int
    let known: Int
    var description: String {
        "the database is at schema version \(found), newer than this binary knows (\(known)): run the newer "
            + "latchkey, or restore the backup taken before the upgrade"
    }
}
