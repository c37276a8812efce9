import Foundation
import LatchkeyServer

/// Where a person is signed in: their active sessions, and ending one of them.
extension SQLiteStore {
    /// See `LatchkeyStore.sessions(userID:now:limit:)`.
    package func sessions(userID: String, now: Date, limit: Int) async throws -> [StoredSession] {
        try await transaction { db in
            try db.query(
                """
                SELECT id, created_at, refreshed_at, expires_at, method, provider, subject, client_address, user_agent
                FROM sessions WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ?
                ORDER BY created_at DESC, id DESC LIMIT ?
                """, [.text(userID), .float(now.timeIntervalSince1970), .integer(limit)]
            ).compactMap { row in
                guard let id = row.column("id")?.string else { return nil }
                let provider = row.column("provider")?.string
                return StoredSession(
                    id: id, createdAt: Date(timeIntervalSince1970: row.column("created_at")?.double ?? 0),
                    refreshedAt: row.column("refreshed_at")?.double.map(Date.init(timeIntervalSince1970:)),
                    expiresAt: Date(timeIntervalSince1970: row.column("expires_at")?.double ?? 0),
                    method: row.column("method")?.string.flatMap(SessionMethod.init(rawValue:)), provider: provider,
                    subject: row.column("subject")?.string,
                    client: ClientInfo(
                        address: row.column("client_address")?.string, userAgent: row.column("user_agent")?.string))
            }
        }
    }

    /// See `LatchkeyStore.endSession(id:userID:now:signOut:)`.
    package func endSession(id: String, userID: String, now: Date, signOut: Bool) async throws -> Bool {
        try await transaction { db in
            let ended = try !db.query(
                "UPDATE sessions SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL RETURNING id",
                [.float(now.timeIntervalSince1970), .text(id), .text(userID)]
            ).isEmpty
            if ended { try Self.record(.sessionEnded(id, userID: userID, signOut: signOut), at: now, db) }
            return ended
        }
    }
}
