import Foundation
import LatchkeyAPI
import LatchkeyServer
import NIOCore
import PostgresNIO

extension PostgresStore {
    /// The session a refresh token belongs to and whether it was spent: one statement.
    package func refreshTokenFamily(hash: Data) async throws -> RefreshTokenFamily? {
        try await withConnection("refresh token family") { connection in
            guard let (sessionID, spent, ended) = try await connection.rows(Prepared.RefreshFamily(hash: hash)).first
            else { return nil }
            return RefreshTokenFamily(sessionID: sessionID, spent: spent, ended: ended)
        }
    }

    /// Spends a refresh token and stores its successor in one statement when it is current (the
    /// usual case, `Prepared.RotateRefresh`): its conditions are `Verdicts.refresh`'s `.rotate`
    /// row, and when they do not all hold it changes nothing and the general path decides. The
    /// spend is a conditional `UPDATE`: of two concurrent rotations of one token, on one server or
    /// two, exactly one matches; the other waits for its row lock, no longer matches, and the
    /// general path then sees a spent token, a reuse, which revokes the session.
    ///
    /// The general path (the only one when `fastPaths` is off) locks the token's row and its
    /// session's, reads the facts, lets `Verdicts.refresh` decide, and writes
    /// what it decided in the same transaction: a concurrent rotation of the token, a sign-out or
    /// a disable either commits before the read (and is seen) or waits for the commit. The fast
    /// path is one round trip where the general path takes five (`BEGIN`, the locks, the read,
    /// the write, `COMMIT`), on the path every app takes each quarter of an hour; the storage
    /// contract runs with it on and off.
    package func rotateRefreshToken(
        hash: Data, newHash: Data, now: Date, newExpiresAt: Date, retryWindow: TimeInterval, retryCandidates: [Data]
    ) async throws -> RefreshOutcome {
        if fastPaths {
            let rotated = try await withConnection("rotate refresh token") { connection in
                try await connection.rows(
                    Prepared.RotateRefresh(now: now, newHash: newHash, hash: hash, newExpiresAt: newExpiresAt)
                ).first
            }
            if let (sessionID, userID, anonymous, method, secondFactor) = rotated {
                return .rotated(
                    sessionID: sessionID, userID: userID, anonymous: anonymous,
                    assurance: Self.assurance(method: method, secondFactor: secondFactor))
            }
        }
        return try await transaction("rotate refresh token") { connection in
            guard
                let read = try await Self.refreshFacts(
                    hash: hash, now: now, retryWindow: retryWindow, retryCandidates: retryCandidates, connection)
            else { return .invalid }
            let verdict = Verdicts.refresh(read.facts)
            switch verdict {
            case .invalid, .retry, .refuseSuperseded: break
            case .retryLate:
                if let successor = read.successor {
                    try await connection.run(
                        "UPDATE refresh_tokens SET reissued_at = COALESCE(reissued_at, \(now)) WHERE hash = \(successor)"
                    )
                }
            case .revokeReused, .revokeDisabled:
                try await connection.run(
                    "UPDATE sessions SET revoked_at = \(now) WHERE id = \(read.sessionID) AND revoked_at IS NULL")
                if verdict == .revokeReused {
                    try await Self.record(
                        AuditEvent(
                            type: .refreshTokenReused, userID: read.userID,
                            detail: ["session_id": .string(read.sessionID)]), at: now, connection)
                }
            case .rotate:
                try await connection.run(
                    """
                    WITH spent AS (UPDATE refresh_tokens SET used_at = \(now), successor_hash = \(newHash)
                        WHERE hash = \(hash)),
                    successor AS (INSERT INTO refresh_tokens (hash, session_id, created_at, expires_at)
                        VALUES (\(newHash), \(read.sessionID), \(now), \(newExpiresAt)))
                    UPDATE sessions SET expires_at = \(newExpiresAt), refreshed_at = \(now) WHERE id = \(read.sessionID)
                    """)
            }
            return verdict.outcome(
                sessionID: read.sessionID, userID: read.userID, successor: read.successor, anonymous: read.anonymous,
                assurance: read.assurance)
        }
    }

    /// What `Verdicts.refresh` decides on for the token `hash`, read once the token's row and its
    /// session's are locked; `nil` for a token never issued.
    ///
    /// Two statements: the locks first, then the read. A read that waits for a lock sees the
    /// locked rows as committed meanwhile but everything else as of its own start, so a successor
    /// that a concurrent rotation had just stored would look absent, and its retry would read as a
    /// reuse; the second statement starts after the wait and sees it. The session is locked for
    /// update from the start, not shared: two transactions sharing it and then both revoking it
    /// would deadlock.
    static func refreshFacts(
        hash: Data, now: Date, retryWindow: TimeInterval, retryCandidates: [Data], _ connection: PostgresConnection
    ) async throws -> (
        facts: RefreshFacts, sessionID: String, userID: String, successor: Data?, anonymous: Bool,
        assurance: SessionAssurance
    )? {
        try await connection.run(
            """
            SELECT 1 FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE r.hash = \(hash)
            FOR UPDATE OF r FOR NO KEY UPDATE OF s
            """)
        guard
            let row = try await connection.rows(
                """
                SELECT r.session_id, s.user_id, r.used_at, r.expires_at <= \(now), s.revoked_at IS NOT NULL,
                    u.disabled, r.successor_hash,
                    EXISTS (SELECT 1 FROM refresh_tokens n WHERE n.hash = r.successor_hash AND n.used_at IS NULL
                        AND n.expires_at > \(now)),
                    EXISTS (SELECT 1 FROM refresh_tokens n WHERE n.hash = r.successor_hash AND n.used_at IS NOT NULL),
                    r.reissued_at IS NOT NULL, u.anonymous, s.method, s.second_factor
                FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN users u ON u.id = s.user_id
                WHERE r.hash = \(hash)
                """
            ).first
        else { return nil }
        let (
            sessionID, userID, usedAt, expired, ended, disabled, successor, successorLive, successorSpent, reissued,
            anonymous, method, secondFactor
        ) =
            try row.decode(
                (String, String, Date?, Bool, Bool, Bool, Data?, Bool, Bool, Bool, Bool, String?, String?).self)
        var facts = RefreshFacts(
            sessionEnded: ended, spent: usedAt != nil, expired: expired, userDisabled: disabled, reissued: reissued)
        if let usedAt, let successor {
            facts.noteSpend(
                at: usedAt, successor: successor, now: now, window: retryWindow, candidates: retryCandidates)
            facts.successorLive = successorLive
            facts.successorSpent = successorSpent
        }
        return (
            facts, sessionID, userID, successor, anonymous, assurance(method: method, secondFactor: secondFactor)
        )
    }

    /// A session's `method` and `second_factor` columns as its tokens' assurance.
    static func assurance(method: String?, secondFactor: String?) -> SessionAssurance {
        SessionAssurance(
            method: method.flatMap(SessionMethod.init(rawValue:)),
            secondFactor: secondFactor.flatMap(SecondFactorKind.init(rawValue:)))
    }
}

/// Where a person is signed in: their active sessions, and ending one of them.
extension PostgresStore {
    /// See `LatchkeyStore.sessions(userID:now:limit:)`.
    package func sessions(userID: String, now: Date, limit: Int) async throws -> [StoredSession] {
        try await withConnection("sessions") { connection in
            try await connection.rows(
                """
                SELECT id, created_at, refreshed_at, expires_at, method, provider, subject, client_address, user_agent
                FROM sessions WHERE user_id = \(userID) AND revoked_at IS NULL AND expires_at > \(now)
                ORDER BY created_at DESC, id DESC LIMIT \(limit)
                """
            ).map { row in
                let (id, created, refreshed, expires, method, provider, subject, address, userAgent) = try row.decode(
                    (String, Date, Date?, Date, String?, String?, String?, String?, String?).self)
                return StoredSession(
                    id: id, createdAt: created, refreshedAt: refreshed, expiresAt: expires,
                    method: method.flatMap(SessionMethod.init(rawValue:)), provider: provider, subject: subject,
                    client: ClientInfo(address: address, userAgent: userAgent))
            }
        }
    }

    /// See `LatchkeyStore.endSession(id:userID:now:signOut:)`.
    package func endSession(id: String, userID: String, now: Date, signOut: Bool) async throws -> Bool {
        try await transaction("end session") { connection in
            let ended = try await !connection.rows(
                """
                UPDATE sessions SET revoked_at = \(now) WHERE id = \(id) AND user_id = \(userID) AND revoked_at IS NULL
                RETURNING 1
                """
            ).isEmpty
            if ended { try await Self.record(.sessionEnded(id, userID: userID, signOut: signOut), at: now, connection) }
            return ended
        }
    }
}
