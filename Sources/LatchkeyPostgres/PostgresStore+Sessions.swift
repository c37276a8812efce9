import Foundation
import LatchkeyServer
import PostgresNIO

extension PostgresStore {
    /// The session a refresh token belongs to and whether it was spent: one statement.
    public func refreshTokenFamily(hash: Data) async throws -> RefreshTokenFamily? {
        try await withConnection("refresh token family") { connection in
            guard
                let row = try await connection.rows(
                    """
                    SELECT r.session_id, r.used_at IS NOT NULL, s.revoked_at IS NOT NULL
                    FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE r.hash = \(hash)
                    """
                ).first
            else { return nil }
            let (sessionID, spent, ended) = try row.decode((String, Bool, Bool).self)
            return RefreshTokenFamily(sessionID: sessionID, spent: spent, ended: ended)
        }
    }

    /// Spends a refresh token and stores its successor in one statement when it is current (the
    /// usual case). The spend is a conditional `UPDATE`: of two concurrent rotations of one token,
    /// on one server or two, exactly one matches; the other waits for its row lock, no longer
    /// matches, and is judged by `judgeRefusedRotation` as a reuse, which revokes the session.
    public func rotateRefreshToken(
        hash: Data, newHash: Data, now: Date, newExpiresAt: Date
    ) async throws -> RefreshOutcome {
        try await withConnection("rotate refresh token") { connection in
            let rotated = try await connection.rows(
                """
                WITH spent AS (
                    UPDATE refresh_tokens r SET used_at = \(now) FROM sessions s, users u
                    WHERE r.hash = \(hash) AND r.used_at IS NULL AND r.expires_at > \(now)
                        AND s.id = r.session_id AND s.revoked_at IS NULL AND u.id = s.user_id AND NOT u.disabled
                    RETURNING r.session_id, s.user_id),
                successor AS (
                    INSERT INTO refresh_tokens (hash, session_id, created_at, expires_at)
                    SELECT \(newHash), session_id, \(now), \(newExpiresAt) FROM spent),
                renewed AS (UPDATE sessions SET expires_at = \(newExpiresAt) WHERE id IN (SELECT session_id FROM spent))
                SELECT session_id, user_id FROM spent
                """)
            if let row = rotated.first {
                let (sessionID, userID) = try row.decode((String, String).self)
                return .rotated(sessionID: sessionID, userID: userID)
            }
            return try await Self.judgeRefusedRotation(hash: hash, now: now, connection)
        }
    }

    /// Why a token did not rotate, acting on it: a spent token revokes its session (someone holds
    /// a copy, RFC 6819 §5.2.2.3), as does a disabled user's; the rest is `.invalid`. One
    /// statement, so the verdict and the revocation agree.
    static func judgeRefusedRotation(
        hash: Data, now: Date, _ connection: PostgresConnection
    ) async throws -> RefreshOutcome {
        guard
            let row = try await connection.rows(
                """
                WITH t AS (
                    SELECT r.session_id, r.used_at IS NOT NULL AS spent, r.expires_at > \(now) AS live,
                        s.revoked_at IS NOT NULL AS revoked, u.disabled
                    FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN users u ON u.id = s.user_id
                    WHERE r.hash = \(hash)),
                revoked AS (
                    UPDATE sessions SET revoked_at = \(now)
                    WHERE id IN (SELECT session_id FROM t WHERE NOT revoked AND (spent OR (live AND disabled)))
                        AND revoked_at IS NULL)
                SELECT session_id, spent, live, revoked, disabled FROM t
                """
            ).first
        else { return .invalid }
        let (sessionID, spent, live, revoked, disabled) = try row.decode((String, Bool, Bool, Bool, Bool).self)
        if revoked { return .invalid }
        if spent { return .reused(sessionID: sessionID) }
        guard live else { return .invalid }
        // `setUserDisabled` already revokes sessions; this guards rows changed outside the store.
        if disabled { return .userDisabled(sessionID: sessionID) }
        // Current, live, enabled, yet not rotated: cannot happen after the spend's own checks.
        return .invalid
    }
}
