import Foundation
import LatchkeyAPI
import LatchkeyServer
import PostgresNIO

extension PostgresStore {
    /// The user with identities, or `nil`: one statement.
    package func user(id: String) async throws -> StoredUser? {
        try await withConnection("user") { connection in try await Self.loadUser(id, connection) }
    }

    /// Merges properties (`.null` removes a key) under the user's row lock, so two concurrent
    /// updates both land.
    package func updateProperties(
        userID: String, properties: [String: JSONValue], now: Date
    ) async throws -> StoredUser? {
        try await transaction("update properties") { connection in
            guard
                let row = try await connection.rows(
                    "SELECT properties::text FROM users WHERE id = \(userID) FOR UPDATE"
                ).first
            else { return nil }
            let current = StorageRules.propertiesAfterUpdate(
                current: Self.decodeObject(try row.decode(String.self)), changes: properties)
            try await connection.run(
                "UPDATE users SET properties = \(Self.json(current))::json, updated_at = \(now) WHERE id = \(userID)")
            return try await Self.loadUser(userID, connection)
        }
    }

    /// Disables or re-enables a user; disabling revokes every active session.
    ///
    /// Two statements in one transaction, the user first: a sign-in under way holds the user's row
    /// (`FOR SHARE`), so the first waits for it to commit, and only the second, which starts after
    /// that wait and so sees the session that sign-in opened, revokes sessions. In one statement
    /// the revocation would use the snapshot taken before the wait and miss that session, which
    /// would then come back with a re-enable (`PostgresSignInTests`).
    package func setUserDisabled(
        id: String, disabled: Bool, now: Date, by actor: AuditEvent.Actor
    ) async throws -> Int? {
        try await transaction("set user disabled") { connection in
            let rows = try await connection.rows(
                "UPDATE users SET disabled = \(disabled), updated_at = \(now) WHERE id = \(id) RETURNING id")
            guard !rows.isEmpty else { return nil }
            let ended = disabled ? try await Self.revokeSessions(of: id, now: now, connection) : 0
            try await Self.record(
                .userState(disabled: disabled, userID: id, by: actor, sessionsEnded: ended), at: now, connection)
            return ended
        }
    }

    /// The user of an active session: one statement.
    package func activeUser(id: String, sessionID: String) async throws -> StoredUser? {
        try await withConnection("active user") { connection in
            try Self.user(
                from: try await connection.rows(Prepared.ActiveUser(userID: id, sessionID: sessionID)))
        }
    }

    /// Whether the session exists, is not revoked, and its user is not disabled.
    package func isSessionActive(id: String) async throws -> Bool {
        try await withConnection("session active") { connection in
            try await !connection.rows(Prepared.SessionActive(sessionID: id)).isEmpty
        }
    }

    /// See `LatchkeyStore.sessionProof`.
    package func sessionProof(id: String, now: Date) async throws -> SessionProof? {
        try await withConnection("session proof") { connection in
            guard
                let row = try await connection.rows(
                    """
                    SELECT s.user_id, COALESCE(s.revoked_at IS NULL AND s.expires_at > \(now) AND NOT u.disabled, false),
                        COALESCE(u.anonymous, false), s.created_at, COALESCE(s.authenticated_at, s.created_at),
                        s.stepped_up_at, s.second_factor
                    FROM sessions s LEFT JOIN users u ON u.id = s.user_id WHERE s.id = \(id)
                    """
                ).first
            else { return nil }
            let (userID, active, anonymous, createdAt, authenticatedAt, steppedUpAt, secondFactor) = try row.decode(
                (String, Bool, Bool, Date, Date, Date?, String?).self)
            return SessionProof(
                userID: userID, active: active, anonymous: anonymous, createdAt: createdAt,
                authenticatedAt: authenticatedAt,
                steppedUpAt: steppedUpAt, secondFactor: secondFactor.flatMap(SecondFactorKind.init(rawValue:)))
        }
    }

    /// Revokes one session; `true` if it was active.
    package func revokeSession(id: String, now: Date) async throws -> Bool {
        try await withConnection("revoke session") { connection in
            try await !connection.rows(
                "UPDATE sessions SET revoked_at = \(now) WHERE id = \(id) AND revoked_at IS NULL RETURNING 1"
            ).isEmpty
        }
    }

    /// Revokes every active session of a user and records it; returns how many. The user's row is
    /// read `FOR SHARE` first, as a sign-in does, so a disable running beside it is ordered with it.
    package func revokeSessions(userID: String, now: Date, by actor: AuditEvent.Actor) async throws -> Int {
        try await transaction("revoke sessions") { connection in
            let exists = try await !connection.rows("SELECT 1 FROM users WHERE id = \(userID) FOR SHARE").isEmpty
            let ended = try await Self.revokeSessions(of: userID, now: now, connection)
            if exists {
                try await Self.record(
                    .sessionsRevoked(userID: userID, by: actor, sessionsEnded: ended), at: now, connection)
            }
            return ended
        }
    }

    /// The user's audit events, newest first. A kind this version does not know (written by a
    /// newer one) is left out.
    package func auditEvents(userID: String, before: Int64?, limit: Int) async throws -> [RecordedAuditEvent] {
        try await withConnection("audit events") { connection in
            try await connection.rows(
                """
                SELECT id, at, type, detail::text, node, client_address, user_agent FROM audit_events
                WHERE user_id = \(userID) AND id < \(before ?? .max) ORDER BY id DESC LIMIT \(limit)
                """
            ).compactMap { row in
                let (id, at, type, detail, node, address, userAgent) = try row.decode(
                    (Int64, Date, String, String, String?, String?, String?).self)
                guard let kind = AuditEvent.Kind(rawValue: type) else { return nil }
                return RecordedAuditEvent(
                    AuditEvent(
                        type: kind, userID: userID,
                        detail: (try? JSONValue.decode(Data(detail.utf8))) ?? .object([:])),
                    at: at, id: id,
                    context: AuditContext(node: node, client: ClientInfo(address: address, userAgent: userAgent)))
            }
        }
    }

    /// Revokes the user's active sessions inside the caller's transaction; how many.
    static func revokeSessions(of userID: String, now: Date, _ connection: PostgresConnection) async throws -> Int {
        try await connection.rows(
            "UPDATE sessions SET revoked_at = \(now) WHERE user_id = \(userID) AND revoked_at IS NULL RETURNING 1"
        ).count
    }

    /// Writes `event` to the audit log inside the caller's transaction, saying where it came from
    /// (`AuditContext.current`: the caller's task, which the transaction runs in).
    static func record(_ event: AuditEvent, at now: Date, _ connection: PostgresConnection) async throws {
        let context = AuditContext.current
        let detail = String(decoding: context.detail(of: event).encoded(), as: UTF8.self)
        let userID: String? = event.userID.isEmpty ? nil : event.userID
        try await connection.run(
            """
            INSERT INTO audit_events (at, type, user_id, detail, node, client_address, user_agent)
            VALUES (\(now), \(event.type.rawValue), \(userID), \(detail)::json, \(context.node),
                \(context.client.address), \(context.client.userAgent))
            """)
    }

    /// Records a single-use value; `false` on replay. An expired record left for `prune` is taken
    /// over as if absent (the upsert's `WHERE`), as in every backend.
    package func useOnce(kind: String, value: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await withConnection("use once") { connection in
            try await Self.spend(kind: kind, value: value, expiresAt: expiresAt, now: now, connection)
        }
    }

    /// Records a single-use value inside the caller's transaction; `false` when it is recorded
    /// and unexpired (a concurrent spender that got there first wins: this one waits on its row
    /// and then finds it).
    static func spend(
        kind: String, value: String, expiresAt: Date, now: Date, _ connection: PostgresConnection
    ) async throws -> Bool {
        try await !connection.rows(
            """
            INSERT INTO single_use (kind, value, expires_at) VALUES (\(kind), \(value), \(expiresAt))
            ON CONFLICT (kind, value) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE single_use.expires_at < \(now) RETURNING 1
            """
        ).isEmpty
    }

    /// Stores a server-issued nonce; expired ones are left to `prune`.
    package func storeNonce(_ nonce: String, expiresAt: Date, now: Date) async throws {
        try await withConnection("store nonce") { connection in
            _ = try await connection.rows(Prepared.StoreNonce(nonce: nonce, expiresAt: expiresAt))
        }
    }

    // MARK: Reading users

    /// The user with its identities, or `nil`: one statement, one row per identity.
    static func loadUser(_ id: String, _ connection: PostgresConnection) async throws -> StoredUser? {
        try user(from: try await connection.rows(Prepared.LoadUser(userID: id)))
    }

    /// A user row (`u`) joined with each of its identities (`i`, absent when it has none), the
    /// columns `loadUser(_:_:)` decodes.
    static let userColumns = """
        u.id, u.created_at, u.updated_at, u.disabled, u.properties::text, u.anonymous,
            i.provider, i.subject, i.app_id, i.granted::text, i.first_seen, i.last_seen
        """

    /// The user that `rows` describe (`userColumns`), or `nil`.
    static func user(from rows: [PostgresRow]) throws -> StoredUser? {
        var user: StoredUser?
        for row in rows {
            let (
                id, created, updated, disabled, properties, anonymous, provider, subject, appID, granted, firstSeen,
                lastSeen
            ) =
                try row.decode(
                    (String, Date, Date, Bool, String, Bool, String?, String?, String?, String?, Date?, Date?).self)
            if user == nil {
                user = StoredUser(
                    id: id, createdAt: created, updatedAt: updated, disabled: disabled,
                    properties: decodeObject(properties), identities: [], anonymous: anonymous)
            }
            if let provider, let subject, let firstSeen, let lastSeen {
                user?.identities.append(
                    StoredIdentity(
                        provider: provider, subject: subject, appID: appID ?? "",
                        grantedPermissions: decodeStrings(granted), firstSeen: firstSeen, lastSeen: lastSeen))
            }
        }
        // The order every backend returns: first seen, then provider and subject.
        user?.identities.sort { ($0.firstSeen, $0.provider, $0.subject) < ($1.firstSeen, $1.provider, $1.subject) }
        return user
    }
}
