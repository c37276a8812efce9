import Foundation
import LatchkeyAPI
import LatchkeyServer
import PostgresNIO

/// Providers' data-deletion requests: received, reviewed, carried out.
extension PostgresStore {
    /// See `LatchkeyStore.receiveDeletionRequest`. An advisory lock on the identity orders two
    /// concurrent requests for it, so the second finds the first and answers its code.
    package func receiveDeletionRequest(
        _ request: NewDeletionRequest, now: Date
    ) async throws -> StoredDeletionRequest {
        try await transaction("receive deletion request") { connection in
            try await connection.run(
                "SELECT pg_advisory_xact_lock(hashtext('deletion:' || \(request.provider) || ':' || \(request.subject)))"
            )
            let identity = try await connection.rows(
                """
                SELECT user_id, first_seen FROM identities
                WHERE provider = \(request.provider) AND subject = \(request.subject)
                """
            ).first?.decode((String, Date).self)
            let held =
                identity.map { StorageRules.heldWhenIssued(firstSeen: $0.1, issuedAt: request.issuedAt) } ?? false
            let holder = held ? identity?.0 : nil
            let earlier = try await Self.deletionRequests(
                where: "provider = $1 AND subject = $2 ORDER BY created_at DESC, id DESC LIMIT 1",
                [request.provider, request.subject], connection
            ).first
            let replayed = try await !Self.spend(
                kind: "deletion_request", value: request.replayKey, expiresAt: request.replayKeyExpiresAt, now: now,
                connection)
            let receipt = Verdicts.deletionReceipt(
                request.policy, DeletionReceiptFacts(earlier: earlier?.status, held: held, replayed: replayed))
            guard case .new(let status) = receipt else {
                guard let earlier else { throw LinkRace() }
                return earlier
            }
            try await connection.run(
                """
                INSERT INTO deletion_requests (id, code, provider, subject, app_id, user_id, policy, property_keys,
                    status, created_at, updated_at)
                VALUES (\(request.id), \(request.code), \(request.provider), \(request.subject), \(request.appID),
                    \(holder), \(request.policy.rawValue), \(Self.json(request.propertyKeys))::json, \(status.rawValue),
                    \(now), \(now))
                """)
            let stored = StoredDeletionRequest(
                id: request.id, code: request.code, provider: request.provider, subject: request.subject,
                appID: request.appID, userID: holder, policy: request.policy, propertyKeys: request.propertyKeys,
                status: status, reason: nil,
                heldData: nil, createdAt: PostgresTime.stored(now), updatedAt: PostgresTime.stored(now))
            if status == .inProgress {
                try await Self.insert([StorageRules.deletionJob(for: stored)], now: now, connection)
            }
            try await Self.record(
                .deletion(.deletionRequested, stored, userID: holder, extra: request.detail), at: now, connection)
            return stored
        }
    }

    /// See `LatchkeyStore.deletionRequest(code:)`.
    package func deletionRequest(code: String) async throws -> StoredDeletionRequest? {
        try await withConnection("deletion request") { connection in
            try await Self.deletionRequests(where: "code = $1", [code], connection).first
        }
    }

    /// See `LatchkeyStore.deletionRequest(id:)`.
    package func deletionRequest(id: String) async throws -> StoredDeletionRequest? {
        try await withConnection("deletion request") { connection in
            try await Self.deletionRequests(where: "id = $1", [id], connection).first
        }
    }

    /// See `LatchkeyStore.deletionRequests(status:limit:)`.
    package func deletionRequests(status: DeletionStatus?, limit: Int) async throws -> [StoredDeletionRequest] {
        try await withConnection("deletion requests") { connection in
            if let status {
                return try await Self.deletionRequests(
                    where: "status = $1 ORDER BY created_at, id LIMIT \(max(limit, 0))", [status.rawValue], connection)
            }
            return try await Self.deletionRequests(
                where: "true ORDER BY created_at, id LIMIT \(max(limit, 0))", [], connection)
        }
    }

    /// See `LatchkeyStore.decideDeletionRequest`. The request's row is locked, so a decision and
    /// another one (or the job) are ordered.
    package func decideDeletionRequest(
        id: String, _ decision: DeletionDecision, now: Date, by actor: AuditEvent.Actor
    ) async throws -> StoredDeletionRequest? {
        try await transaction("decide deletion request") { connection in
            guard var request = try await Self.deletionRequests(where: "id = $1 FOR UPDATE", [id], connection).first
            else { return nil }
            guard decision.applies(to: request.status) else { return request }
            switch decision {
            case .retry:
                try await Self.insert([StorageRules.deletionJob(for: request)], now: now, connection)
                try await Self.record(
                    .deletion(
                        .deletionApproved, request, userID: request.userID,
                        extra: ["by": .string(actor.rawValue), "retry": true]), at: now, connection)
            case .approve:
                request.status = .inProgress
                try await connection.run(
                    "UPDATE deletion_requests SET status = \(request.status.rawValue), updated_at = \(now) WHERE id = \(id)"
                )
                try await Self.insert([StorageRules.deletionJob(for: request)], now: now, connection)
                try await Self.record(
                    .deletion(
                        .deletionApproved, request, userID: request.userID, extra: ["by": .string(actor.rawValue)]),
                    at: now, connection)
            case .refuse(let reason):
                request.status = .refused
                request.reason = reason
                try await connection.run(
                    """
                    UPDATE deletion_requests SET status = \(request.status.rawValue), reason = \(reason),
                        updated_at = \(now) WHERE id = \(id)
                    """)
                try await Self.record(
                    .deletion(
                        .deletionRefused, request, userID: request.userID,
                        extra: ["by": .string(actor.rawValue), "reason": .string(reason)]), at: now, connection)
            }
            request.updatedAt = PostgresTime.stored(now)
            return request
        }
    }

    /// See `LatchkeyStore.carryOutDeletionRequest`. The holder's row is locked before the
    /// request's, as a sign-in or a provider's event takes them.
    package func carryOutDeletionRequest(id: String, now: Date) async throws -> StoredDeletionRequest? {
        try await transaction("carry out deletion request") { connection in
            guard let peek = try await Self.deletionRequests(where: "id = $1", [id], connection).first else {
                return nil
            }
            let user = try await Self.lockedHolder(provider: peek.provider, subject: peek.subject, connection)
            guard var request = try await Self.deletionRequests(where: "id = $1 FOR UPDATE", [id], connection).first
            else { return nil }
            let verdict = Verdicts.dataDeletion(
                request.policy, status: request.status,
                DataDeletionFacts(identityKnown: user != nil, identities: user?.identities.count ?? 0))
            switch verdict {
            case .skip: return request
            case .nothingHeld: break
            case .deleteUser:
                guard let user else { return request }
                try await Self.delete(user, by: .provider, now: now, connection)
            case .removeIdentity:
                guard let user, let identity = user.identity(request.provider, request.subject) else { return request }
                try await Self.removeIdentity(
                    identity, of: user, properties: request.propertyKeys, now: now, connection)
            }
            let (done, event) = StorageRules.deletionDone(
                request, verdict: verdict, userID: user?.id ?? "", at: PostgresTime.stored(now))
            try await connection.run(
                """
                UPDATE deletion_requests SET status = \(done.status.rawValue), held_data = \(done.heldData),
                    updated_at = \(now) WHERE id = \(id)
                """)
            try await Self.record(event, at: now, connection)
            request = done
            return request
        }
    }

    /// Removes `identity` from `user` (locked) on its provider's request: its stored tokens are
    /// revoked in the background, the properties `keys` name go, and the sessions it opened end
    /// (with those whose opener is unknown).
    static func removeIdentity(
        _ identity: StoredIdentity, of user: StoredUser, properties keys: [String], now: Date,
        _ connection: PostgresConnection
    ) async throws {
        let tokens = try await takeProviderTokens(of: [identity], connection)
        try await insert(StorageRules.revocationJobs(userID: user.id, tokens: tokens, at: now), now: now, connection)
        try await connection.run(
            "DELETE FROM identities WHERE provider = \(identity.provider) AND subject = \(identity.subject)")
        let properties = StorageRules.propertiesWithout(keys, from: user.properties)
        try await connection.run(
            "UPDATE users SET properties = \(json(properties))::json, updated_at = \(now) WHERE id = \(user.id)")
        // The user's last way in gone: every session with it.
        _ = try await endSessions(
            of: user.id,
            openedBy: StorageRules.sessionsEnded(by: identity, of: user, removing: true, allSessions: false),
            now: now, connection)
        try await record(.identity(linked: false, userID: user.id, identity: identity), at: now, connection)
    }

    /// The requests matching `condition` (SQL after `WHERE`, with `$1`… for `values`).
    static func deletionRequests(
        where condition: String, _ values: [String], _ connection: PostgresConnection
    ) async throws -> [StoredDeletionRequest] {
        var bindings = PostgresBindings()
        for value in values { bindings.append(value) }
        let rows = try await connection.rows(
            PostgresQuery(
                unsafeSQL: """
                    SELECT id, code, provider, subject, app_id, user_id, policy, property_keys::text, status, reason,
                        held_data, created_at, updated_at
                    FROM deletion_requests WHERE \(condition)
                    """, binds: bindings))
        var requests: [StoredDeletionRequest] = []
        for row in rows {
            let (id, code, provider, subject, appID, userID, policy, keys, status, reason, held, created, updated) =
                try row.decode(
                    (
                        String, String, String, String, String, String?, String, String, String, String?, Bool?, Date,
                        Date
                    )
                    .self)
            guard let policy = DeletionPolicy(rawValue: policy), let status = DeletionStatus(rawValue: status) else {
                continue
            }
            requests.append(
                StoredDeletionRequest(
                    id: id, code: code, provider: provider, subject: subject, appID: appID, userID: userID,
                    policy: policy,
                    propertyKeys: (try? JSONValue.decode(Data(keys.utf8)))?.arrayValue?.compactMap(\.stringValue) ?? [],
                    status: status, reason: reason, heldData: held, createdAt: created, updatedAt: updated))
        }
        return requests
    }
}
