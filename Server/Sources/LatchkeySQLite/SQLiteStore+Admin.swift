import Foundation
import LatchkeyAPI
import LatchkeyServer

/// What operators do: admin keys, finding users, and the changes only an operator makes.
extension SQLiteStore {
    /// See `LatchkeyStore.createAdminKey`.
    package func createAdminKey(_ key: StoredAdminKey, by actor: AuditEvent.Actor) async throws {
        try await transaction { db in
            try db.execute(
                "INSERT INTO admin_keys (id, name, hash, created_at) VALUES (?, ?, ?, ?)",
                [.text(key.id), .text(key.name), .blob(key.hash), .float(key.createdAt.timeIntervalSince1970)])
            try Self.record(.adminKey(created: true, key, by: actor), at: key.createdAt, db)
        }
    }

    /// See `LatchkeyStore.adminKeys`.
    package func adminKeys() async throws -> [StoredAdminKey] {
        try await transaction { db in
            try db.query("\(Self.adminKeyColumns) ORDER BY created_at DESC, id DESC").compactMap(Self.adminKey)
        }
    }

    /// See `LatchkeyStore.adminKey(id:)`.
    package func adminKey(id: String) async throws -> StoredAdminKey? {
        try await transaction { db in try Self.adminKey(id: id, db) }
    }

    /// See `LatchkeyStore.revokeAdminKey`.
    package func revokeAdminKey(id: String, now: Date, by actor: AuditEvent.Actor) async throws -> StoredAdminKey? {
        try await transaction { db in
            guard let key = try Self.adminKey(id: id, db) else { return nil }
            guard key.revokedAt == nil else { return key }
            try db.execute(
                "UPDATE admin_keys SET revoked_at = ? WHERE id = ?", [.float(now.timeIntervalSince1970), .text(id)])
            try Self.record(.adminKey(created: false, key, by: actor), at: now, db)
            return try Self.adminKey(id: id, db)
        }
    }

    /// See `LatchkeyStore.recordAdminCall`.
    package func recordAdminCall(_ event: AuditEvent, keyID: String, now: Date) async throws {
        try await transaction { db in
            try db.execute(
                "UPDATE admin_keys SET last_used_at = ? WHERE id = ?",
                [.float(now.timeIntervalSince1970), .text(keyID)])
            try Self.record(event, at: now, db)
        }
    }

    /// See `LatchkeyStore.endConsoleSessions`.
    package func endConsoleSessions(keyID: String) async throws {
        try await transaction { db in
            try db.execute(
                "UPDATE admin_keys SET console_generation = console_generation + 1 WHERE id = ?", [.text(keyID)])
        }
    }

    /// See `LatchkeyStore.searchUsers`.
    package func searchUsers(
        _ search: UserSearch, after cursor: UserCursor?, limit: Int, scanning: Int
    ) async throws -> UserSearchPage {
        try await transaction { db in
            // After the cursor's user, found by its own stored time (exact), or by the cursor's
            // time when that user is gone; before every user without a cursor.
            let after =
                "(created_at, id) < (COALESCE((SELECT created_at FROM users WHERE id = ?), ?), ?)"
            let position: [SQLiteValue] = [
                .text(cursor?.id ?? ""), .float(cursor?.createdAt.timeIntervalSince1970 ?? .greatestFiniteMagnitude),
                .text(cursor?.id ?? ""),
            ]
            let order = "ORDER BY created_at DESC, id DESC LIMIT ?"
            let rows: [SQLiteRow]
            var resumeAfter: UserCursor?
            switch search {
            case .all:
                rows = try db.query("SELECT id FROM users WHERE \(after) \(order)", position + [.integer(limit)])
            case .term(let term):
                rows = try db.query(
                    """
                    SELECT id FROM users WHERE id IN (
                        SELECT ? UNION SELECT user_id FROM identities WHERE subject = ?
                        UNION SELECT id FROM users WHERE lower(properties -> '$.email') = lower(?))
                    AND \(after) \(order)
                    """, [.text(term), .text(term), .text(StorageRules.jsonText(term))] + position + [.integer(limit)])
            case .property(let name, let value):
                // Not indexed: only the next `scanning` users are read, newest first (the inner
                // query walks `users_created`, and stops early once the page is full).
                let (text, literal) = StorageRules.propertySearchValues(value)
                // Ordered again outside: a subquery's order is not the outer query's.
                rows = try db.query(
                    """
                    SELECT id FROM (SELECT id, created_at, properties FROM users WHERE \(after) \(order))
                    WHERE (properties -> ?) IN (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?
                    """,
                    position + [.integer(scanning), .text("$.\"\(name)\""), .text(text), .optionalText(literal)]
                        + [.integer(limit)])
                if rows.count < limit, scanning < Int(Int32.max) {
                    // The window's last user, when more follow it: where the next call goes on.
                    let edge = try db.query(
                        "SELECT id, created_at FROM users WHERE \(after) ORDER BY created_at DESC, id DESC LIMIT 2 OFFSET ?",
                        position + [.integer(max(scanning, 1) - 1)])
                    if edge.count == 2, let id = edge[0].column("id")?.string,
                        let created = edge[0].column("created_at")?.double
                    {
                        resumeAfter = UserCursor(id: id, createdAt: Date(timeIntervalSince1970: created))
                    }
                }
            }
            let users = try rows.compactMap { row in
                try row.column("id")?.string.flatMap { try Self.loadUser($0, db) }
            }
            return UserSearchPage(users: users, resumeAfter: resumeAfter)
        }
    }

    /// See `LatchkeyStore.deleteUser(id:now:by:)`.
    package func deleteUser(id: String, now: Date, by actor: AuditEvent.Actor) async throws -> Bool {
        try await transaction { db in
            guard let user = try Self.loadUser(id, db) else { return false }
            try Self.delete(user, by: actor, now: now, db)
            return true
        }
    }

    /// See `LatchkeyStore.removeIdentity(userID:provider:subject:now:)`.
    package func removeIdentity(
        userID: String, provider: String, subject: String, now: Date
    ) async throws -> StoredUser {
        try await transaction { db in
            let (user, found) = try Verdicts.operatorUnlink(
                try Self.loadUser(userID, db), provider: provider, subject: subject)
            try Self.removeIdentity(found, of: user, properties: [], now: now, db)
            guard let after = try Self.loadUser(userID, db) else { throw SQLiteStoreError.inconsistent }
            return after
        }
    }

    /// See `LatchkeyStore.gauges`.
    package func gauges(now: Date) async throws -> StoreGauges {
        try await transaction { db in
            let stamp = SQLiteValue.float(now.timeIntervalSince1970)
            let row = try db.query(
                """
                SELECT (SELECT count(*) FROM sessions WHERE revoked_at IS NULL AND expires_at > ?) AS active,
                    (SELECT count(*) FROM deletion_requests WHERE status = 'received') AS received,
                    (SELECT count(*) FROM deletion_requests WHERE status = 'in_progress') AS in_progress,
                    (SELECT count(*) FROM jobs WHERE due_at <= ? AND (lease_until IS NULL OR lease_until < ?)) AS due
                """, [stamp, stamp, stamp]
            ).first
            return StoreGauges(
                activeSessions: row?.column("active")?.integer ?? 0,
                deletionsReceived: row?.column("received")?.integer ?? 0,
                deletionsInProgress: row?.column("in_progress")?.integer ?? 0, jobsDue: row?.column("due")?.integer ?? 0
            )
        }
    }

    static let adminKeyColumns =
        "SELECT id, name, hash, created_at, last_used_at, revoked_at, console_generation FROM admin_keys"

    static func adminKey(id: String, _ db: SQLiteConnectionState) throws -> StoredAdminKey? {
        try db.query("\(adminKeyColumns) WHERE id = ?", [.text(id)]).first.flatMap(adminKey)
    }

    static func adminKey(_ row: SQLiteRow) -> StoredAdminKey? {
        guard let id = row.column("id")?.string, let name = row.column("name")?.string,
            let hash = row.column("hash")?.blob, let created = row.column("created_at")?.double
        else { return nil }
        return StoredAdminKey(
            id: id, name: name, hash: hash, createdAt: Date(timeIntervalSince1970: created),
            lastUsedAt: row.column("last_used_at")?.double.map(Date.init(timeIntervalSince1970:)),
            revokedAt: row.column("revoked_at")?.double.map(Date.init(timeIntervalSince1970:)),
            consoleGeneration: row.column("console_generation")?.integer ?? 0)
    }
}
