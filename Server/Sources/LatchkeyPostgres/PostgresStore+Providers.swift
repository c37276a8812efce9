import Foundation
import LatchkeyAPI
import LatchkeyServer
import PostgresNIO

/// What providers send about their people: refresh tokens kept to revoke, and out-of-band events.
extension PostgresStore {
    /// See `LatchkeyStore.saveProviderToken`.
    package func saveProviderToken(_ token: StoredProviderToken, now: Date) async throws {
        try await transaction("save provider token") { connection in
            try await connection.run(
                """
                INSERT INTO provider_tokens (provider, subject, client_id, token, updated_at)
                VALUES (\(token.provider), \(token.subject), \(token.clientID), \(token.token), \(now))
                ON CONFLICT (provider, subject, client_id) DO UPDATE SET token = EXCLUDED.token,
                    updated_at = EXCLUDED.updated_at
                """)
            try await connection.run(
                """
                UPDATE identities SET revoked_at = NULL
                WHERE provider = \(token.provider) AND subject = \(token.subject) AND revoked_at IS NOT NULL
                """)
        }
    }

    /// See `LatchkeyStore.applyProviderEvent`. The identity's user row is locked first, then the
    /// identity read again: a merge that moved it meanwhile is seen, and the event applies to the
    /// user that has it now.
    package func applyProviderEvent(_ event: ProviderEvent, now: Date) async throws -> ProviderEventOutcome {
        try await transaction("provider event") { connection in
            let user = try await Self.lockedHolder(provider: event.provider, subject: event.subject, connection)
            let replayed = try await !connection.rows(
                """
                SELECT 1 FROM single_use WHERE kind = 'provider_event' AND value = \(event.eventID)
                    AND expires_at >= \(now) FOR UPDATE
                """
            ).isEmpty
            let verdict = Verdicts.providerEvent(
                event.kind,
                ProviderEventFacts(
                    replayed: replayed, identityKnown: user != nil, identities: user?.identities.count ?? 0,
                    signedInSince: StorageRules.signedInSince(event, user)))
            if verdict == .ignore { return .replayed }
            // A concurrent delivery of the same event that got here first wins; this one is a replay.
            guard
                try await Self.spend(
                    kind: "provider_event", value: event.eventID, expiresAt: event.eventIDExpiresAt, now: now,
                    connection)
            else { return .replayed }
            guard let user,
                let identity = user.identity(event.provider, event.subject)
            else { return .unknownIdentity }
            var sessionsEnded = 0
            switch verdict {
            case .ignore, .spendOnly: return .unknownIdentity
            case .deleteUser:
                // Its history goes with it; the tombstone says the provider asked.
                try await Self.delete(user, by: .provider, now: now, connection)
                return .applied(userID: user.id, userDeleted: true)
            case .removeIdentity:
                // The account is gone at the provider: its tokens are dead, nothing to revoke.
                try await Self.deleteProviderTokens(of: [identity], connection)
                try await connection.run(
                    "DELETE FROM identities WHERE provider = \(event.provider) AND subject = \(event.subject)")
                sessionsEnded = try await Self.endSessions(
                    of: user.id,
                    openedBy: StorageRules.sessionsEnded(
                        by: identity, of: user, removing: true, allSessions: event.endsAllSessions),
                    now: now, connection)
            case .apply:
                switch event.kind {
                case .consentRevoked:
                    try await Self.deleteProviderTokens(of: [identity], connection)
                    try await connection.run(
                        """
                        UPDATE identities SET revoked_at = \(now)
                        WHERE provider = \(event.provider) AND subject = \(event.subject)
                        """)
                    sessionsEnded = try await Self.endSessions(
                        of: user.id,
                        openedBy: StorageRules.sessionsEnded(
                            by: identity, of: user, removing: false, allSessions: event.endsAllSessions),
                        now: now, connection)
                case .emailDisabled, .emailEnabled:
                    try await connection.run(
                        """
                        UPDATE identities SET email_disabled = \(event.kind == .emailDisabled)
                        WHERE provider = \(event.provider) AND subject = \(event.subject)
                        """)
                case .accountDeleted: break  // decided above
                }
            }
            try await Self.record(
                .providerEvent(event, userID: user.id, sessionsEnded: sessionsEnded), at: now, connection)
            return .applied(userID: user.id, userDeleted: false)
        }
    }

    /// The user holding an identity, their row locked `FOR UPDATE` for the rest of the
    /// transaction, or `nil`. Each pass loses only to a merge or deletion that committed meanwhile.
    static func lockedHolder(
        provider: String, subject: String, _ connection: PostgresConnection
    ) async throws -> StoredUser? {
        func owner() async throws -> String? {
            try await connection.rows(
                "SELECT user_id FROM identities WHERE provider = \(provider) AND subject = \(subject)"
            ).first?.decode(String.self)
        }
        for _ in 0..<4 {
            guard let holder = try await owner() else { return nil }
            _ = try await connection.rows("SELECT 1 FROM users WHERE id = \(holder) FOR UPDATE")
            if try await owner() == holder { return try await Self.loadUser(holder, connection) }
        }
        // Four races lost in a row: not "nobody holds it", which would let a deletion record
        // that nothing was held. The caller's transaction fails and is tried again.
        throw StoreUnavailable("the identity changed owner during the operation, four times")
    }

    /// Ends the active sessions of `userID` that `identity` opened, and those whose opener is
    /// unknown (opened before Latchkey recorded it) or a guest (the account before its first
    /// identity, upgraded by one); every one when `identity` is `nil`. How many.
    static func endSessions(
        of userID: String, openedBy identity: StoredIdentity?, now: Date, _ connection: PostgresConnection
    ) async throws -> Int {
        guard let identity else {
            return try await connection.rows(
                "UPDATE sessions SET revoked_at = \(now) WHERE user_id = \(userID) AND revoked_at IS NULL RETURNING 1"
            ).count
        }
        return try await connection.rows(
            """
            UPDATE sessions SET revoked_at = \(now) WHERE user_id = \(userID) AND revoked_at IS NULL
                AND ((provider = \(identity.provider) AND subject = \(identity.subject)) OR method IS NULL
                    OR method = 'guest')
            RETURNING 1
            """
        ).count
    }

    /// See `LatchkeyStore.providerTokensToReseal`.
    package func providerTokensToReseal(
        sealedPrefix: Data, skip: Int, limit: Int
    ) async throws -> [StoredProviderToken] {
        try await withConnection("provider tokens to reseal") { connection in
            try await connection.rows(
                """
                SELECT provider, subject, client_id, token FROM provider_tokens
                WHERE substring(token from 1 for \(sealedPrefix.count)::integer) <> \(sealedPrefix)
                ORDER BY provider, subject, client_id LIMIT \(max(limit, 0)) OFFSET \(max(skip, 0))
                """
            ).map { row in
                let (provider, subject, client, token) = try row.decode((String, String, String, Data).self)
                return StoredProviderToken(provider: provider, subject: subject, clientID: client, token: token)
            }
        }
    }

    /// See `LatchkeyStore.replaceProviderToken`.
    package func replaceProviderToken(_ token: StoredProviderToken, with sealed: Data) async throws -> Bool {
        try await withConnection("reseal provider token") { connection in
            try await !connection.rows(
                """
                UPDATE provider_tokens SET token = \(sealed)
                WHERE provider = \(token.provider) AND subject = \(token.subject) AND client_id = \(token.clientID)
                    AND token = \(token.token)
                RETURNING 1
                """
            ).isEmpty
        }
    }

    /// See `LatchkeyStore.providerTokenSavedAt`.
    package func providerTokenSavedAt(provider: String, subject: String, clientID: String) async throws -> Date? {
        try await withConnection("provider token") { connection in
            try await connection.rows(
                """
                SELECT updated_at FROM provider_tokens
                WHERE provider = \(provider) AND subject = \(subject) AND client_id = \(clientID)
                """
            ).first?.decode(Date.self)
        }
    }

    /// See `LatchkeyStore.identityState`.
    package func identityState(provider: String, subject: String) async throws -> IdentityState? {
        try await withConnection("identity state") { connection in
            guard
                let row = try await connection.rows(
                    """
                    SELECT user_id, revoked_at, email_disabled FROM identities
                    WHERE provider = \(provider) AND subject = \(subject)
                    """
                ).first
            else { return nil }
            let (userID, revokedAt, emailDisabled) = try row.decode((String, Date?, Bool).self)
            let clients = try await connection.rows(
                """
                SELECT client_id FROM provider_tokens WHERE provider = \(provider) AND subject = \(subject)
                ORDER BY client_id
                """
            ).map { try $0.decode(String.self) }
            return IdentityState(
                userID: userID, revokedAt: revokedAt, emailForwardingDisabled: emailDisabled, tokenClientIDs: clients)
        }
    }

    /// See `LatchkeyStore.recordEvent`.
    package func recordEvent(_ event: AuditEvent, now: Date) async throws {
        try await transaction("record event") { connection in try await Self.record(event, at: now, connection) }
    }
}
