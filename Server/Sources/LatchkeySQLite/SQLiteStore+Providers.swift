import Foundation
import LatchkeyAPI
import LatchkeyServer

/// What providers send about their people: refresh tokens kept to revoke, and out-of-band events.
extension SQLiteStore {
    /// See `LatchkeyStore.saveProviderToken`.
    package func saveProviderToken(_ token: StoredProviderToken, now: Date) async throws {
        try await transaction { db in
            try db.execute(
                """
                INSERT INTO provider_tokens (provider, subject, client_id, token, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (provider, subject, client_id) DO UPDATE SET token = excluded.token,
                    updated_at = excluded.updated_at
                """,
                [
                    .text(token.provider), .text(token.subject), .text(token.clientID), .blob(token.token),
                    .float(now.timeIntervalSince1970),
                ])
            try db.execute(
                "UPDATE identities SET revoked_at = NULL WHERE provider = ? AND subject = ? AND revoked_at IS NOT NULL",
                [.text(token.provider), .text(token.subject)])
        }
    }

    /// See `LatchkeyStore.applyProviderEvent`.
    package func applyProviderEvent(_ event: ProviderEvent, now: Date) async throws -> ProviderEventOutcome {
        try await transaction { db in
            let owner = try db.query(
                "SELECT user_id FROM identities WHERE provider = ? AND subject = ?",
                [.text(event.provider), .text(event.subject)]
            ).first?.column("user_id")?.string
            let user = try owner.flatMap { try Self.loadUser($0, db) }
            let verdict = Verdicts.providerEvent(
                event.kind,
                ProviderEventFacts(
                    replayed: try Self.isSpent(kind: "provider_event", value: event.eventID, now: now, db),
                    identityKnown: user != nil, identities: user?.identities.count ?? 0,
                    signedInSince: StorageRules.signedInSince(event, user)))
            if verdict == .ignore { return .replayed }
            _ = try Self.spend(
                kind: "provider_event", value: event.eventID, expiresAt: event.eventIDExpiresAt, now: now, db)
            guard let user,
                let identity = user.identity(event.provider, event.subject)
            else {
                return .unknownIdentity
            }
            let stamp = SQLiteValue.float(now.timeIntervalSince1970)
            let key: [SQLiteValue] = [.text(event.provider), .text(event.subject)]
            var sessionsEnded = 0
            switch verdict {
            case .ignore, .spendOnly: return .unknownIdentity
            case .deleteUser:
                // Its history goes with it; the tombstone says the provider asked.
                try Self.delete(user, by: .provider, now: now, db)
                return .applied(userID: user.id, userDeleted: true)
            case .removeIdentity:
                // The account is gone at the provider: its tokens are dead, nothing to revoke.
                try Self.deleteProviderTokens(of: [identity], db)
                try db.execute("DELETE FROM identities WHERE provider = ? AND subject = ?", key)
                sessionsEnded = try Self.endSessions(
                    of: user.id,
                    openedBy: StorageRules.sessionsEnded(
                        by: identity, of: user, removing: true, allSessions: event.endsAllSessions),
                    now: now, db)
            case .apply:
                switch event.kind {
                case .consentRevoked:
                    try Self.deleteProviderTokens(of: [identity], db)
                    try db.execute(
                        "UPDATE identities SET revoked_at = ? WHERE provider = ? AND subject = ?", [stamp] + key)
                    sessionsEnded = try Self.endSessions(
                        of: user.id,
                        openedBy: StorageRules.sessionsEnded(
                            by: identity, of: user, removing: false, allSessions: event.endsAllSessions),
                        now: now, db)
                case .emailDisabled, .emailEnabled:
                    try db.execute(
                        "UPDATE identities SET email_disabled = ? WHERE provider = ? AND subject = ?",
                        [.integer(event.kind == .emailDisabled ? 1 : 0)] + key)
                case .accountDeleted: break  // decided above
                }
            }
            try Self.record(.providerEvent(event, userID: user.id, sessionsEnded: sessionsEnded), at: now, db)
            return .applied(userID: user.id, userDeleted: false)
        }
    }

    /// Ends every active session of `userID`; how many.
    static func endSessions(of userID: String, now: Date, _ db: SQLiteConnectionState) throws -> Int {
        try db.query(
            "UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL RETURNING id",
            [.float(now.timeIntervalSince1970), .text(userID)]
        ).count
    }

    /// See `LatchkeyStore.providerTokensToReseal`.
    package func providerTokensToReseal(
        sealedPrefix: Data, skip: Int, limit: Int
    ) async throws -> [StoredProviderToken] {
        try await transaction { db in
            try db.query(
                """
                SELECT provider, subject, client_id, token FROM provider_tokens WHERE substr(token, 1, ?) != ?
                ORDER BY provider, subject, client_id LIMIT ? OFFSET ?
                """,
                [.integer(sealedPrefix.count), .blob(sealedPrefix), .integer(max(limit, 0)), .integer(max(skip, 0))]
            ).compactMap { row in
                guard let provider = row.column("provider")?.string, let subject = row.column("subject")?.string,
                    let client = row.column("client_id")?.string, let token = row.column("token")?.blob
                else { return nil }
                return StoredProviderToken(provider: provider, subject: subject, clientID: client, token: token)
            }
        }
    }

    /// See `LatchkeyStore.replaceProviderToken`.
    package func replaceProviderToken(_ token: StoredProviderToken, with sealed: Data) async throws -> Bool {
        try await transaction { db in
            try !db.query(
                """
                UPDATE provider_tokens SET token = ? WHERE provider = ? AND subject = ? AND client_id = ? AND token = ?
                RETURNING 1
                """,
                [.blob(sealed), .text(token.provider), .text(token.subject), .text(token.clientID), .blob(token.token)]
            ).isEmpty
        }
    }

    /// See `LatchkeyStore.providerTokenSavedAt`.
    package func providerTokenSavedAt(provider: String, subject: String, clientID: String) async throws -> Date? {
        try await transaction { db in
            try db.query(
                "SELECT updated_at FROM provider_tokens WHERE provider = ? AND subject = ? AND client_id = ?",
                [.text(provider), .text(subject), .text(clientID)]
            ).first?.column("updated_at")?.double.map(Date.init(timeIntervalSince1970:))
        }
    }

    /// See `LatchkeyStore.identityState`.
    package func identityState(provider: String, subject: String) async throws -> IdentityState? {
        try await transaction { db in
            guard
                let row = try db.query(
                    "SELECT user_id, revoked_at, email_disabled FROM identities WHERE provider = ? AND subject = ?",
                    [.text(provider), .text(subject)]
                ).first, let userID = row.column("user_id")?.string
            else { return nil }
            let clients = try db.query(
                "SELECT client_id FROM provider_tokens WHERE provider = ? AND subject = ? ORDER BY client_id",
                [.text(provider), .text(subject)]
            ).compactMap { $0.column("client_id")?.string }
            return IdentityState(
                userID: userID, revokedAt: row.column("revoked_at")?.double.map(Date.init(timeIntervalSince1970:)),
                emailForwardingDisabled: row.column("email_disabled")?.integer == 1, tokenClientIDs: clients)
        }
    }

    /// See `LatchkeyStore.recordEvent`.
    package func recordEvent(_ event: AuditEvent, now: Date) async throws {
        try await transaction { db in try Self.record(event, at: now, db) }
    }
}
