import Foundation
import LatchkeyAPI
import LatchkeyServer
import PostgresNIO

/// What operators do: admin keys, finding users, and the changes only an operator makes.
extension PostgresStore {
    /// See `LatchkeyStore.createAdminKey`.
    package func createAdminKey(_ key: StoredAdminKey, by actor: AuditEvent.Actor) async throws {
        try await transaction("create admin key") { connection in
            try await connection.run(
                """
                INSERT INTO admin_keys (id, name, hash, created_at)
                VALUES (\(key.id), \(key.name), \(key.hash), \(key.createdAt))
                """)
            try await Self.record(.adminKey(created: true, key, by: actor), at: key.createdAt, connection)
        }
    }

    /// See `LatchkeyStore.adminKeys`.
    package func adminKeys() async throws -> [StoredAdminKey] {
        try await withConnection("admin keys") { connection in
            try await connection.rows(
                PostgresQuery(unsafeSQL: "\(Self.adminKeyColumns) ORDER BY created_at DESC, id DESC")
            ).map(Self.adminKey)
        }
    }

    /// See `LatchkeyStore.adminKey(id:)`.
    package func adminKey(id: String) async throws -> StoredAdminKey? {
        try await withConnection("admin key") { connection in try await Self.adminKey(id: id, connection) }
    }

    /// See `LatchkeyStore.revokeAdminKey`.
    package func revokeAdminKey(id: String, now: Date, by actor: AuditEvent.Actor) async throws -> StoredAdminKey? {
        try await transaction("revoke admin key") { connection in
            guard let key = try await Self.adminKey(id: id, lock: true, connection) else { return nil }
            guard key.revokedAt == nil else { return key }
            try await connection.run("UPDATE admin_keys SET revoked_at = \(now) WHERE id = \(id)")
            try await Self.record(.adminKey(created: false, key, by: actor), at: now, connection)
            return try await Self.adminKey(id: id, connection)
        }
    }

    /// See `LatchkeyStore.recordAdminCall`.
    package func recordAdminCall(_ event: AuditEvent, keyID: String, now: Date) async throws {
        try await transaction("record admin call") { connection in
            try await connection.run("UPDATE admin_keys SET last_used_at = \(now) WHERE id = \(keyID)")
            try await Self.record(event, at: now, connection)
        }
    }

    /// See `LatchkeyStore.endConsoleSessions`.
    package func endConsoleSessions(keyID: String) async throws {
        try await withConnection("end console sessions") { connection in
            try await connection.run(
                "UPDATE admin_keys SET console_generation = console_generation + 1 WHERE id = \(keyID)")
        }
    }

    /// See `LatchkeyStore.searchUsers`.
    package func searchUsers(
        _ search: UserSearch, after cursor: UserCursor?, limit: Int, scanning: Int
    ) async throws -> UserSearchPage {
        // One snapshot for the ids and the users read after them: a user deleted in between would
        // otherwise shorten the page, and the caller would take it for the last one.
        try await transaction("search users") { connection in
            try await connection.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            var bindings = PostgresBindings()
            var condition: String
            // A property's match, tested on a window of the next `scanning` users (not indexed).
            var match: String?
            switch search {
            case .all:
                condition = "true"
            case .term(let term):
                bindings.append(term)
                bindings.append(StorageRules.jsonText(term))
                condition = """
                    id IN (
                        SELECT $1 UNION SELECT user_id FROM identities WHERE subject = $1
                        UNION SELECT id FROM users WHERE \(PostgresSchema.emailKey) = \(PostgresSchema.asciiLower("$2")))
                    """
            case .property(let name, let value):
                let (text, literal) = StorageRules.propertySearchValues(value)
                bindings.append(name)
                bindings.append(text)
                bindings.append(literal)
                condition = "true"
                match = "(properties -> $1)::text IN ($2, $3)"
            }
            if let cursor {
                // After the cursor's user, by its own stored time (exact), or by the cursor's time
                // when that user is gone.
                let first = bindings.count + 1
                bindings.append(cursor.id)
                bindings.append(cursor.createdAt)
                condition += """
                     AND (created_at, id) < (
                        COALESCE((SELECT created_at FROM users WHERE id = $\(first)), $\(first + 1)), $\(first))
                    """
            }
            let order = "ORDER BY created_at DESC, id DESC"
            let query: String
            if let match {
                // The inner query walks `users_created` and stops once the page is full.
                bindings.append(scanning)
                bindings.append(limit)
                // Ordered again outside: a subquery's order is not the outer query's.
                query = """
                    SELECT id FROM (
                        SELECT id, created_at, properties FROM users WHERE \(condition) \(order)
                        LIMIT $\(bindings.count - 1)::bigint
                    ) AS scanned WHERE \(match) \(order) LIMIT $\(bindings.count)::integer
                    """
            } else {
                bindings.append(limit)
                query = "SELECT id FROM users WHERE \(condition) \(order) LIMIT $\(bindings.count)::integer"
            }
            let ids = try await connection.rows(PostgresQuery(unsafeSQL: query, binds: bindings)).map {
                try $0.decode(String.self)
            }
            var users: [StoredUser] = []
            for id in ids {
                if let user = try await Self.loadUser(id, connection) { users.append(user) }
            }
            var resumeAfter: UserCursor?
            if match != nil, ids.count < limit, scanning < Int(Int32.max) {
                // The window's last user, when more follow it: where the next call goes on.
                var edgeBindings = PostgresBindings()
                var edgeCondition = "true"
                if let cursor {
                    edgeBindings.append(cursor.id)
                    edgeBindings.append(cursor.createdAt)
                    edgeCondition =
                        "(created_at, id) < (COALESCE((SELECT created_at FROM users WHERE id = $1), $2), $1)"
                }
                edgeBindings.append(max(scanning, 1) - 1)
                let edge = try await connection.rows(
                    PostgresQuery(
                        unsafeSQL: """
                            SELECT id, created_at FROM users WHERE \(edgeCondition) \(order)
                            LIMIT 2 OFFSET $\(edgeBindings.count)::bigint
                            """, binds: edgeBindings)
                ).map { try $0.decode((String, Date).self) }
                if edge.count == 2 { resumeAfter = UserCursor(id: edge[0].0, createdAt: edge[0].1) }
            }
            return UserSearchPage(users: users, resumeAfter: resumeAfter)
        }
    }

    /// See `LatchkeyStore.deleteUser(id:now:by:)`.
    package func deleteUser(id: String, now: Date, by actor: AuditEvent.Actor) async throws -> Bool {
        try await transaction("delete user") { connection in
            guard try await !connection.rows("SELECT 1 FROM users WHERE id = \(id) FOR UPDATE").isEmpty,
                let user = try await Self.loadUser(id, connection)
            else { return false }
            try await Self.delete(user, by: actor, now: now, connection)
            return true
        }
    }

    /// See `LatchkeyStore.removeIdentity(userID:provider:subject:now:)`.
    package func removeIdentity(
        userID: String, provider: String, subject: String, now: Date
    ) async throws -> StoredUser {
        try await transaction("remove identity") { connection in
            // The user's row lock orders this against a concurrent link or unlink of the same user.
            let exists = try await !connection.rows("SELECT 1 FROM users WHERE id = \(userID) FOR UPDATE").isEmpty
            let (user, found) = try Verdicts.operatorUnlink(
                exists ? try await Self.loadUser(userID, connection) : nil, provider: provider, subject: subject)
            try await Self.removeIdentity(found, of: user, properties: [], now: now, connection)
            guard let after = try await Self.loadUser(userID, connection) else { throw IdentityRefusal.sessionEnded }
            return after
        }
    }

    /// See `LatchkeyStore.gauges`.
    package func gauges(now: Date) async throws -> StoreGauges {
        let counts = try await withConnection("gauges") { connection in
            try await connection.rows(
                """
                SELECT (SELECT count(*) FROM sessions WHERE revoked_at IS NULL AND expires_at > \(now))::integer,
                    (SELECT count(*) FROM deletion_requests WHERE status = 'received')::integer,
                    (SELECT count(*) FROM deletion_requests WHERE status = 'in_progress')::integer,
                    (SELECT count(*) FROM jobs WHERE due_at <= \(now) AND (lease_until IS NULL OR lease_until < \(now)))::integer
                """
            ).first?.decode((Int, Int, Int, Int).self)
        }
        return StoreGauges(
            activeSessions: counts?.0 ?? 0, deletionsReceived: counts?.1 ?? 0, deletionsInProgress: counts?.2 ?? 0,
            jobsDue: counts?.3 ?? 0, pool: connections.usage)
    }

    static let adminKeyColumns =
        "SELECT id, name, hash, created_at, last_used_at, revoked_at, console_generation FROM admin_keys"

    static func adminKey(
        id: String, lock: Bool = false, _ connection: PostgresConnection
    ) async throws
        -> StoredAdminKey?
    {
        var bindings = PostgresBindings()
        bindings.append(id)
        return try await connection.rows(
            PostgresQuery(
                unsafeSQL: "\(adminKeyColumns) WHERE id = $1\(lock ? " FOR UPDATE" : "")", binds: bindings)
        ).first.map(adminKey)
    }

    static func adminKey(_ row: PostgresRow) throws -> StoredAdminKey {
        let (id, name, hash, created, lastUsed, revoked, generation) = try row.decode(
            (String, String, Data, Date, Date?, Date?, Int).self)
        return StoredAdminKey(
            id: id, name: name, hash: hash, createdAt: created, lastUsedAt: lastUsed, revokedAt: revoked,
            consoleGeneration: generation)
    }
}
