import Foundation
import LatchkeyServer
import NIOCore
import PostgresNIO

extension PostgresStore {
    /// The session a refresh token belongs to and whether it was spent: one statement.
    public func refreshTokenFamily(hash: Data) async throws -> RefreshTokenFamily? {
        try await withConnection("refresh token family") { connection in
            guard let (sessionID, spent, ended) = try await connection.rows(Prepared.RefreshFamily(hash: hash)).first
            else { return nil }
            return RefreshTokenFamily(sessionID: sessionID, spent: spent, ended: ended)
        }
    }

    /// Spends a refresh token and stores its successor in one statement when it is current (the
    /// usual case). The spend is a conditional `UPDATE`: of two concurrent rotations of one token,
    /// on one server or two, exactly one matches; the other waits for its row lock, no longer
    /// matches, and is judged by `judgeRefusedRotation` as a reuse, which revokes the session.
    public func rotateRefreshToken(
        hash: Data, newHash: Data, now: Date, newExpiresAt: Date, retryWindow: TimeInterval, retryCandidates: [Data]
    ) async throws -> RefreshOutcome {
        try await withConnection("rotate refresh token") { connection in
            let rotated = try await connection.rows(
                Prepared.RotateRefresh(now: now, newHash: newHash, hash: hash, newExpiresAt: newExpiresAt))
            if let (sessionID, userID) = rotated.first {
                return .rotated(sessionID: sessionID, userID: userID)
            }
            return try await Self.judgeRefusedRotation(
                hash: hash, now: now, retryWindow: retryWindow, retryCandidates: retryCandidates, connection)
        }
    }

    /// Why a token did not rotate, acting on it: a spent token revokes its session (someone holds
    /// a copy, RFC 6819 §5.2.2.3) unless it is a retry within the window, and a disabled user's
    /// session is revoked too; the rest is `.invalid`. One statement, so the verdict and the
    /// revocation agree. A concurrent rotation of the same token has committed by now (this runs
    /// after the rotation's `UPDATE` waited for its row lock), so its retry is seen as one.
    static func judgeRefusedRotation(
        hash: Data, now: Date, retryWindow: TimeInterval, retryCandidates: [Data], _ connection: PostgresConnection
    ) async throws -> RefreshOutcome {
        let candidates = retryCandidates.map { ByteBuffer(bytes: $0) }
        let bounds = StorageRules.retryBounds(now: now, window: retryWindow)
        guard
            let row = try await connection.rows(
                """
                WITH t AS (
                    SELECT r.session_id, s.user_id, r.used_at IS NOT NULL AS spent, r.expires_at > \(now) AS live,
                        s.revoked_at IS NOT NULL AS revoked, u.disabled, r.successor_hash,
                        -- COALESCE: a token spent before successors were recorded has none, and a
                        -- NULL here would keep its reuse from revoking.
                        COALESCE(r.used_at > \(bounds.spentAfter) AND r.used_at <= \(bounds.spentBy) AND NOT u.disabled
                            AND r.successor_hash = ANY(\(candidates)::bytea[])
                            AND EXISTS (SELECT 1 FROM refresh_tokens n WHERE n.hash = r.successor_hash
                                AND n.used_at IS NULL AND n.expires_at > \(now)), false) AS retry
                    FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN users u ON u.id = s.user_id
                    WHERE r.hash = \(hash)),
                revoked AS (
                    UPDATE sessions SET revoked_at = \(now)
                    WHERE id IN (
                        SELECT session_id FROM t WHERE NOT revoked AND ((spent AND NOT retry) OR (live AND disabled)))
                        AND revoked_at IS NULL)
                SELECT session_id, user_id, spent, live, revoked, disabled, retry, successor_hash FROM t
                """
            ).first
        else { return .invalid }
        let (sessionID, userID, spent, live, revoked, disabled, retry, successor) = try row.decode(
            (String, String, Bool, Bool, Bool, Bool, Bool, Data?).self)
        if revoked { return .invalid }
        if spent, retry, let successor {
            return .retried(sessionID: sessionID, userID: userID, successorHash: successor)
        }
        if spent { return .reused(sessionID: sessionID) }
        guard live else { return .invalid }
        // `setUserDisabled` already revokes sessions; this guards rows changed outside the store.
        if disabled { return .userDisabled(sessionID: sessionID) }
        // Current, live, enabled, yet not rotated: cannot happen after the spend's own checks.
        return .invalid
    }
}
