import Foundation
import LatchkeyServer

extension SQLiteStore {
    /// Deletes at most `limit` rows of each table that `cutoffs` calls dead, in one transaction.
    ///
    /// Every row is found through an index on its date (migration 3), and each table stops at
    /// `limit`, so the transaction stays short however much is waiting: the sign-ins queued behind
    /// it on the database's one queue wait for at most `limit` deletes per table, found without
    /// scanning (`SQLitePrunePlanTests`).
    package func prune(_ cutoffs: PruneCutoffs, limit: Int) async throws -> PruneReport {
        let limit = max(limit, 0)
        return try await transaction { db in
            var report = PruneReport()
            report.singleUse = try Self.delete(.singleUse, before: cutoffs.singleUseExpiredBefore, limit: limit, db)
            report.nonces = try Self.delete(.nonces, before: cutoffs.noncesExpiredBefore, limit: limit, db)
            report.pendingAuthorizations = try Self.delete(
                .pendingAuthorizations, before: cutoffs.pendingAuthorizationsExpiredBefore, limit: limit, db)
            report.authorizationCodes = try Self.delete(
                .authorizationCodes, before: cutoffs.authorizationCodesExpiredBefore, limit: limit, db)
            report.auditEvents = try Self.delete(.auditEvents, before: cutoffs.auditEventsBefore, limit: limit, db)
            (report.sessions, report.refreshTokens) = try Self.deleteEndedSessions(
                before: cutoffs.sessionsEndedBefore, limit: limit, db)
            report.guests = try Self.deleteUnusedGuests(cutoffs, limit: limit, db)
            report.orphanProviderTokens = try Self.revokeOrphanProviderTokens(
                before: cutoffs.orphanProviderTokensBefore, limit: limit, now: cutoffs.orphanProviderTokensBefore, db)
            report.deletionRequests = try Self.deleteFinishedDeletionRequests(
                before: cutoffs.auditEventsBefore, limit: limit, db)
            report.factorChallenges = try Self.delete(
                .factorChallenges, before: cutoffs.factorChallengesExpiredBefore, limit: limit, db)
            return report
        }
    }

    /// A table whose rows die at a date in one indexed column.
    private enum DatedTable {
        case singleUse, nonces, pendingAuthorizations, authorizationCodes, auditEvents, factorChallenges

        /// Deletes up to `limit` rows dated before `?`, in index order.
        ///
        /// The limit is written into the text, not bound: SQLite plans with a bound `LIMIT`'s value,
        /// so re-binding it compiles the statement again on every call. One text per batch size
        /// (the service has one), each prepared once and cached.
        func delete(limit: Int) -> String {
            let (table, column) =
                switch self {
                case .singleUse: ("single_use", "expires_at")
                case .nonces: ("nonces", "expires_at")
                case .pendingAuthorizations: ("pending_authorizations", "expires_at")
                case .authorizationCodes: ("authorization_codes", "expires_at")
                case .auditEvents: ("audit_events", "at")
                case .factorChallenges: ("factor_challenges", "expires_at")
                }
            return "DELETE FROM \(table) WHERE rowid IN (SELECT rowid FROM \(table) WHERE \(column) < ? LIMIT \(limit))"
        }
    }

    /// Deletes up to `limit` rows of `table` dated before `date`; returns how many.
    private static func delete(
        _ table: DatedTable, before date: Date, limit: Int, _ db: SQLiteConnectionState
    ) throws -> Int {
        try db.execute(table.delete(limit: limit), [.float(date.timeIntervalSince1970)])
        return try db.query("SELECT changes() AS n").first?.column("n")?.integer ?? 0
    }

    /// Deletes up to `limit` data-deletion requests done or refused before `date`,
    /// through the index on status and date; one still open is kept however old.
    private static func deleteFinishedDeletionRequests(
        before date: Date, limit: Int, _ db: SQLiteConnectionState
    ) throws -> Int {
        try db.query(
            """
            DELETE FROM deletion_requests WHERE id IN (
                SELECT id FROM deletion_requests WHERE status IN ('done', 'refused') AND updated_at < ? LIMIT \(limit))
            RETURNING 1
            """, [.float(date.timeIntervalSince1970)]
        ).count
    }

    /// Queues the revocation of up to `limit` provider tokens stored before `date` whose identity
    /// no user has, and forgets them (through the index on their date).
    private static func revokeOrphanProviderTokens(
        before date: Date, limit: Int, now: Date, _ db: SQLiteConnectionState
    ) throws -> Int {
        let orphans = try db.query(
            """
            SELECT provider, subject, client_id, token FROM provider_tokens t WHERE updated_at < ? AND NOT EXISTS (
                SELECT 1 FROM identities i WHERE i.provider = t.provider AND i.subject = t.subject)
            LIMIT \(limit)
            """, [.float(date.timeIntervalSince1970)]
        ).compactMap { row -> StoredProviderToken? in
            guard let provider = row.column("provider")?.string, let subject = row.column("subject")?.string,
                let client = row.column("client_id")?.string, let token = row.column("token")?.blob
            else { return nil }
            return StoredProviderToken(provider: provider, subject: subject, clientID: client, token: token)
        }
        try insert(StorageRules.revocationJobs(userID: "", tokens: orphans, at: now), now: now, db)
        for orphan in orphans {
            try db.execute(
                "DELETE FROM provider_tokens WHERE provider = ? AND subject = ? AND client_id = ?",
                [.text(orphan.provider), .text(orphan.subject), .text(orphan.clientID)])
        }
        return orphans.count
    }

    /// Deletes up to `limit` guests created before `cutoffs.guestsUnusedBefore` with no live session
    /// used since (`PruneCutoffs.guestSessionsExpiringAfter`), found through the partial index on
    /// guests' creation. Their sessions and tokens go by the cascade (a guest has few) and their
    /// audit events with them: nothing personal is left of a guest nobody used.
    private static func deleteUnusedGuests(
        _ cutoffs: PruneCutoffs, limit: Int, _ db: SQLiteConnectionState
    ) throws -> Int {
        let unused = try db.query(
            """
            SELECT id FROM users WHERE anonymous = 1 AND created_at < ? AND NOT EXISTS (
                SELECT 1 FROM sessions s WHERE s.user_id = users.id AND s.revoked_at IS NULL AND s.expires_at > ?)
            LIMIT \(limit)
            """,
            [
                .float(cutoffs.guestsUnusedBefore.timeIntervalSince1970),
                .float(cutoffs.guestSessionsExpiringAfter.timeIntervalSince1970),
            ]
        ).compactMap { $0.column("id")?.string }
        for id in unused {
            try db.execute("DELETE FROM audit_events WHERE user_id = ?", [.text(id)])
            try db.execute("DELETE FROM users WHERE id = ?", [.text(id)])
        }
        return unused.count
    }

    /// Deletes ended sessions (revoked, or whose last refresh token expired, before `date`) with
    /// their refresh tokens: at most `limit` sessions and `limit` tokens.
    ///
    /// The tokens go first, explicitly rather than by the foreign key's cascade: a session may hold
    /// thousands of spent tokens (one per refresh), and a cascade would delete them all in this
    /// transaction. A session is deleted once it has no token left, so a session and its tokens
    /// leave together, over several calls when there are many; until its row goes, the session
    /// reads as ended, as it already did.
    private static func deleteEndedSessions(
        before date: Date, limit: Int, _ db: SQLiteConnectionState
    ) throws -> (sessions: Int, refreshTokens: Int) {
        let cutoff = SQLiteValue.float(date.timeIntervalSince1970)
        // Two index ranges (the partial revocation index, the expiry index), not one OR, which
        // could scan the table.
        let revoked = try db.query(
            "SELECT id FROM sessions WHERE revoked_at IS NOT NULL AND revoked_at < ? LIMIT \(limit)", [cutoff])
        let expired = try db.query("SELECT id FROM sessions WHERE expires_at < ? LIMIT \(limit)", [cutoff])
        var seen = Set<String>()
        let ended = (revoked + expired).compactMap { $0.column("id")?.string }.filter { seen.insert($0).inserted }
        var sessions = 0
        var tokens = 0
        for id in ended.prefix(limit) {
            let found = try db.query(
                "SELECT rowid AS r FROM refresh_tokens WHERE session_id = ? LIMIT \(limit)", [.text(id)]
            ).compactMap { $0.column("r")?.integer }
            let taken = found.prefix(limit - tokens)
            for rowid in taken { try db.execute("DELETE FROM refresh_tokens WHERE rowid = ?", [.integer(rowid)]) }
            tokens += taken.count
            // Tokens may remain when the budget cut the list short, or the list was full (`limit`
            // rows, perhaps more behind): then this session, and the rest, wait for the next call,
            // which the report asks for (`tokens` reached `limit`).
            guard taken.count == found.count, found.count < limit else { break }
            try db.execute("DELETE FROM sessions WHERE id = ?", [.text(id)])
            sessions += 1
        }
        return (sessions, tokens)
    }
}
