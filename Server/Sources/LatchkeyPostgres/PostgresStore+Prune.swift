import Foundation
import LatchkeyServer
import PostgresNIO

extension PostgresStore {
    /// Deletes at most `limit` rows of each table that `cutoffs` calls dead, in one short
    /// transaction; each table's rows are found through the index on their date.
    ///
    /// With many servers on one database, one prunes at a time: the transaction first tries an
    /// advisory lock, and a server that does not get it deletes nothing (an empty report ends its
    /// run; the one holding the lock is doing the work). Two pruners would only fight over the
    /// same rows' locks while sign-ins wait on them.
    package func prune(_ cutoffs: PruneCutoffs, limit: Int) async throws -> PruneReport {
        let limit = max(limit, 0)
        return try await transaction("prune") { connection in
            var report = PruneReport()
            let locked = try await connection.rows(
                "SELECT pg_try_advisory_xact_lock(\(Self.pruneLockClass), hashtext(current_schema()))"
            ).first?.decode(Bool.self)
            guard locked == true else { return report }
            report.singleUse = try await Self.delete(
                "single_use", "expires_at", before: cutoffs.singleUseExpiredBefore, limit: limit, connection)
            report.nonces = try await Self.delete(
                "nonces", "expires_at", before: cutoffs.noncesExpiredBefore, limit: limit, connection)
            report.pendingAuthorizations = try await Self.delete(
                "pending_authorizations", "expires_at", before: cutoffs.pendingAuthorizationsExpiredBefore,
                limit: limit, connection)
            report.authorizationCodes = try await Self.delete(
                "authorization_codes", "expires_at", before: cutoffs.authorizationCodesExpiredBefore, limit: limit,
                connection)
            report.auditEvents = try await Self.delete(
                "audit_events", "at", before: cutoffs.auditEventsBefore, limit: limit, connection)
            (report.sessions, report.refreshTokens) = try await Self.deleteEndedSessions(
                before: cutoffs.sessionsEndedBefore, limit: limit, connection)
            report.guests = try await Self.deleteUnusedGuests(cutoffs, limit: limit, connection)
            report.orphanProviderTokens = try await Self.revokeOrphanProviderTokens(
                before: cutoffs.orphanProviderTokensBefore, limit: limit, connection)
            // Finished data-deletion requests go with the audit log's retention; open ones stay.
            report.deletionRequests = try await connection.rows(
                """
                DELETE FROM deletion_requests WHERE id IN (
                    SELECT id FROM deletion_requests WHERE status IN ('done', 'refused')
                        AND updated_at < \(cutoffs.auditEventsBefore) LIMIT \(limit))
                RETURNING 1
                """
            ).count
            report.factorChallenges = try await Self.delete(
                "factor_challenges", "expires_at", before: cutoffs.factorChallengesExpiredBefore, limit: limit,
                connection)
            return report
        }
    }

    /// Deletes up to `limit` rows of `table` dated before `date` (by row address, found through
    /// the date's index); returns how many. Table and column names are this file's constants.
    private static func delete(
        _ table: String, _ column: String, before date: Date, limit: Int, _ connection: PostgresConnection
    ) async throws -> Int {
        var b = StatementBuilder()
        let sql = """
            WITH gone AS (DELETE FROM \(table) WHERE ctid = ANY(ARRAY(
                SELECT ctid FROM \(table) WHERE \(column) < \(b.bind(date)) LIMIT \(b.bind(limit)))) RETURNING 1)
            SELECT count(*) FROM gone
            """
        return try await connection.rows(b.query(sql)).first?.decode(Int.self) ?? 0
    }

    /// Queues the revocation of up to `limit` provider tokens stored before `date` whose identity
    /// no user has, and forgets them (through the index on their date).
    private static func revokeOrphanProviderTokens(
        before date: Date, limit: Int, _ connection: PostgresConnection
    ) async throws -> Int {
        let orphans = try await connection.rows(
            """
            DELETE FROM provider_tokens WHERE (provider, subject, client_id) IN (
                SELECT provider, subject, client_id FROM provider_tokens t WHERE updated_at < \(date)
                    AND NOT EXISTS (SELECT 1 FROM identities i WHERE i.provider = t.provider AND i.subject = t.subject)
                LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING provider, subject, client_id, token
            """
        ).map { row in
            let (provider, subject, client, token) = try row.decode((String, String, String, Data).self)
            return StoredProviderToken(provider: provider, subject: subject, clientID: client, token: token)
        }
        try await insert(StorageRules.revocationJobs(userID: "", tokens: orphans, at: date), now: date, connection)
        return orphans.count
    }

    /// Deletes up to `limit` guests created before `cutoffs.guestsUnusedBefore` with no live session
    /// used since (`PruneCutoffs.guestSessionsExpiringAfter`), through the partial index on guests'
    /// creation; their sessions go by the cascade (a guest has few), their audit events with them.
    private static func deleteUnusedGuests(
        _ cutoffs: PruneCutoffs, limit: Int, _ connection: PostgresConnection
    ) async throws -> Int {
        try await connection.rows(
            """
            WITH unused AS (
                SELECT id FROM users u WHERE anonymous AND created_at < \(cutoffs.guestsUnusedBefore)
                    AND NOT EXISTS (
                        SELECT 1 FROM sessions s WHERE s.user_id = u.id AND s.revoked_at IS NULL
                            AND s.expires_at > \(cutoffs.guestSessionsExpiringAfter))
                LIMIT \(limit) FOR UPDATE SKIP LOCKED),
            events AS (DELETE FROM audit_events WHERE user_id IN (SELECT id FROM unused))
            DELETE FROM users WHERE id IN (SELECT id FROM unused) RETURNING 1
            """
        ).count
    }

    /// Deletes ended sessions (revoked, or whose last refresh token expired, before `date`) with
    /// their refresh tokens: at most `limit` sessions and `limit` tokens, tokens first and a
    /// session only once it has none left, as `LatchkeyStore.prune` asks (a cascade could delete
    /// thousands of spent tokens in one go).
    private static func deleteEndedSessions(
        before date: Date, limit: Int, _ connection: PostgresConnection
    ) async throws -> (sessions: Int, refreshTokens: Int) {
        // Two index ranges (the partial revocation index, the expiry index), not one OR.
        let ended = try await connection.rows(
            """
            (SELECT id FROM sessions WHERE revoked_at IS NOT NULL AND revoked_at < \(date) LIMIT \(limit))
            UNION (SELECT id FROM sessions WHERE expires_at < \(date) LIMIT \(limit))
            """
        ).map { try $0.decode(String.self) }
        var sessions = 0
        var tokens = 0
        for id in ended.prefix(limit) {
            // One statement: the count beside the delete reads the rows as they were before it.
            let (deleted, had) =
                try await connection.rows(
                    """
                    WITH gone AS (DELETE FROM refresh_tokens WHERE ctid = ANY(ARRAY(
                        SELECT ctid FROM refresh_tokens WHERE session_id = \(id) LIMIT \(limit - tokens))) RETURNING 1)
                    SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM refresh_tokens WHERE session_id = \(id))
                    """
                ).first?.decode((Int, Int).self) ?? (0, 1)
            tokens += deleted
            // Tokens remain when the budget ran out: this session, and the rest, wait for the
            // next call, which the report asks for (`tokens` reached `limit`).
            guard deleted == had else { break }
            try await connection.run("DELETE FROM sessions WHERE id = \(id)")
            sessions += 1
        }
        return (sessions, tokens)
    }
}
