import Foundation
import LatchkeyAPI
import LatchkeyServer

/// Providers' data-deletion requests: received, reviewed, carried out.
extension SQLiteStore {
    /// See `LatchkeyStore.receiveDeletionRequest`.
    package func receiveDeletionRequest(
        _ request: NewDeletionRequest, now: Date
    ) async throws -> StoredDeletionRequest {
        try await transaction { db in
            let key: [SQLiteValue] = [.text(request.provider), .text(request.subject)]
            let identity = try db.query(
                "SELECT user_id, first_seen FROM identities WHERE provider = ? AND subject = ?", key
            ).first
            let held =
                (identity?.column("first_seen")?.double).map {
                    StorageRules.heldWhenIssued(firstSeen: Date(timeIntervalSince1970: $0), issuedAt: request.issuedAt)
                } ?? false
            let holder = held ? identity?.column("user_id")?.string : nil
            let earlier = try db.query(
                "\(Self.deletionColumns) WHERE provider = ? AND subject = ? ORDER BY created_at DESC, id DESC LIMIT 1",
                key
            ).first.flatMap(Self.deletionRequest)
            let replayed = try !Self.spend(
                kind: "deletion_request", value: request.replayKey, expiresAt: request.replayKeyExpiresAt, now: now, db)
            let receipt = Verdicts.deletionReceipt(
                request.policy, DeletionReceiptFacts(earlier: earlier?.status, held: held, replayed: replayed))
            guard case .new(let status) = receipt else {
                guard let earlier else { throw SQLiteStoreError.inconsistent }
                return earlier
            }
            let stamp = SQLiteValue.float(now.timeIntervalSince1970)
            try db.execute(
                """
                INSERT INTO deletion_requests (id, code, provider, subject, app_id, user_id, policy, property_keys,
                    status, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(request.id), .text(request.code), .text(request.provider), .text(request.subject),
                    .text(request.appID), .optionalText(holder), .text(request.policy.rawValue),
                    .text(Self.json(request.propertyKeys)), .text(status.rawValue), stamp, stamp,
                ])
            let stored = StoredDeletionRequest(
                id: request.id, code: request.code, provider: request.provider, subject: request.subject,
                appID: request.appID, userID: holder, policy: request.policy, propertyKeys: request.propertyKeys,
                status: status, reason: nil,
                heldData: nil, createdAt: now, updatedAt: now)
            if status == .inProgress { try Self.insert([StorageRules.deletionJob(for: stored)], now: now, db) }
            try Self.record(
                .deletion(.deletionRequested, stored, userID: holder, extra: request.detail), at: now, db)
            return stored
        }
    }

    /// See `LatchkeyStore.deletionRequest(code:)`.
    package func deletionRequest(code: String) async throws -> StoredDeletionRequest? {
        try await transaction { db in
            try db.query("\(Self.deletionColumns) WHERE code = ?", [.text(code)]).first.flatMap(Self.deletionRequest)
        }
    }

    /// See `LatchkeyStore.deletionRequest(id:)`.
    package func deletionRequest(id: String) async throws -> StoredDeletionRequest? {
        try await transaction { db in try Self.deletionRequest(id: id, db) }
    }

    /// See `LatchkeyStore.deletionRequests(status:limit:)`.
    package func deletionRequests(status: DeletionStatus?, limit: Int) async throws -> [StoredDeletionRequest] {
        try await transaction { db in
            if let status {
                return try db.query(
                    "\(Self.deletionColumns) WHERE status = ? ORDER BY created_at, id LIMIT ?",
                    [.text(status.rawValue), .integer(limit)]
                ).compactMap(Self.deletionRequest)
            }
            return try db.query("\(Self.deletionColumns) ORDER BY created_at, id LIMIT ?", [.integer(limit)])
                .compactMap(Self.deletionRequest)
        }
    }

    /// See `LatchkeyStore.decideDeletionRequest`.
    package func decideDeletionRequest(
        id: String, _ decision: DeletionDecision, now: Date, by actor: AuditEvent.Actor
    ) async throws -> StoredDeletionRequest? {
        try await transaction { db in
            guard var request = try Self.deletionRequest(id: id, db) else { return nil }
            guard decision.applies(to: request.status) else { return request }
            let stamp = SQLiteValue.float(now.timeIntervalSince1970)
            switch decision {
            case .retry:
                try Self.insert([StorageRules.deletionJob(for: request)], now: now, db)
                try Self.record(
                    .deletion(
                        .deletionApproved, request, userID: request.userID,
                        extra: ["by": .string(actor.rawValue), "retry": true]), at: now, db)
            case .approve:
                request.status = .inProgress
                try db.execute(
                    "UPDATE deletion_requests SET status = ?, updated_at = ? WHERE id = ?",
                    [.text(request.status.rawValue), stamp, .text(id)])
                try Self.insert([StorageRules.deletionJob(for: request)], now: now, db)
                try Self.record(
                    .deletion(
                        .deletionApproved, request, userID: request.userID, extra: ["by": .string(actor.rawValue)]),
                    at: now, db)
            case .refuse(let reason):
                request.status = .refused
                request.reason = reason
                try db.execute(
                    "UPDATE deletion_requests SET status = ?, reason = ?, updated_at = ? WHERE id = ?",
                    [.text(request.status.rawValue), .text(reason), stamp, .text(id)])
                try Self.record(
                    .deletion(
                        .deletionRefused, request, userID: request.userID,
                        extra: ["by": .string(actor.rawValue), "reason": .string(reason)]), at: now, db)
            }
            request.updatedAt = now
            return request
        }
    }

    /// See `LatchkeyStore.carryOutDeletionRequest`.
    package func carryOutDeletionRequest(id: String, now: Date) async throws -> StoredDeletionRequest? {
        try await transaction { db in
            guard var request = try Self.deletionRequest(id: id, db) else { return nil }
            let owner = try db.query(
                "SELECT user_id FROM identities WHERE provider = ? AND subject = ?",
                [.text(request.provider), .text(request.subject)]
            ).first?.column("user_id")?.string
            let user = try owner.flatMap { try Self.loadUser($0, db) }
            let verdict = Verdicts.dataDeletion(
                request.policy, status: request.status,
                DataDeletionFacts(identityKnown: user != nil, identities: user?.identities.count ?? 0))
            switch verdict {
            case .skip: return request
            case .nothingHeld: break
            case .deleteUser:
                guard let user else { return request }
                try Self.delete(user, by: .provider, now: now, db)
            case .removeIdentity:
                guard let user, let identity = user.identity(request.provider, request.subject) else { return request }
                try Self.removeIdentity(identity, of: user, properties: request.propertyKeys, now: now, db)
            }
            let (done, event) = StorageRules.deletionDone(request, verdict: verdict, userID: user?.id ?? "", at: now)
            try db.execute(
                "UPDATE deletion_requests SET status = ?, held_data = ?, updated_at = ? WHERE id = ?",
                [
                    .text(done.status.rawValue), .integer(done.heldData == true ? 1 : 0),
                    .float(now.timeIntervalSince1970), .text(id),
                ])
            try Self.record(event, at: now, db)
            request = done
            return request
        }
    }

    /// Removes `identity` from `user` on its provider's request: its stored tokens are revoked in
    /// the background, the properties `keys` name go, and the sessions it opened end (with those
    /// whose opener is unknown).
    static func removeIdentity(
        _ identity: StoredIdentity, of user: StoredUser, properties keys: [String], now: Date,
        _ db: SQLiteConnectionState
    ) throws {
        let tokens = try takeProviderTokens(of: [identity], db)
        try insert(StorageRules.revocationJobs(userID: user.id, tokens: tokens, at: now), now: now, db)
        try db.execute(
            "DELETE FROM identities WHERE provider = ? AND subject = ?",
            [.text(identity.provider), .text(identity.subject)])
        let properties = StorageRules.propertiesWithout(keys, from: user.properties)
        try db.execute(
            "UPDATE users SET properties = ?, updated_at = ? WHERE id = ?",
            [.text(Self.json(properties)), .float(now.timeIntervalSince1970), .text(user.id)])
        // The user's last way in gone: every session with it.
        _ = try endSessions(
            of: user.id,
            openedBy: StorageRules.sessionsEnded(by: identity, of: user, removing: true, allSessions: false),
            now: now, db)
        try Self.record(.identity(linked: false, userID: user.id, identity: identity), at: now, db)
    }

    /// Ends the active sessions of `userID` that `identity` opened, and those whose opener is
    /// unknown (opened before Latchkey recorded it) or a guest (the account before its first
    /// identity, upgraded by one); every one when `identity` is `nil`. How many.
    static func endSessions(
        of userID: String, openedBy identity: StoredIdentity?, now: Date, _ db: SQLiteConnectionState
    ) throws -> Int {
        guard let identity else { return try endSessions(of: userID, now: now, db) }
        return try db.query(
            """
            UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL
                AND ((provider = ? AND subject = ?) OR method IS NULL OR method = 'guest')
            RETURNING id
            """,
            [.float(now.timeIntervalSince1970), .text(userID), .text(identity.provider), .text(identity.subject)]
        ).count
    }

    static let deletionColumns = """
        SELECT id, code, provider, subject, app_id, user_id, policy, property_keys, status, reason, held_data,
            created_at, updated_at
        FROM deletion_requests
        """

    static func deletionRequest(id: String, _ db: SQLiteConnectionState) throws -> StoredDeletionRequest? {
        try db.query("\(deletionColumns) WHERE id = ?", [.text(id)]).first.flatMap(deletionRequest)
    }

    static func deletionRequest(_ row: SQLiteRow) -> StoredDeletionRequest? {
        guard let id = row.column("id")?.string, let code = row.column("code")?.string,
            let provider = row.column("provider")?.string, let subject = row.column("subject")?.string,
            let policy = row.column("policy")?.string.flatMap(DeletionPolicy.init(rawValue:)),
            let status = row.column("status")?.string.flatMap(DeletionStatus.init(rawValue:))
        else { return nil }
        return StoredDeletionRequest(
            id: id, code: code, provider: provider, subject: subject, appID: row.column("app_id")?.string ?? "",
            userID: row.column("user_id")?.string, policy: policy,
            propertyKeys: row.column("property_keys")?.string.flatMap { try? JSONValue.decode(Data($0.utf8)) }?
                .arrayValue?.compactMap(\.stringValue) ?? [],
            status: status, reason: row.column("reason")?.string,
            heldData: row.column("held_data")?.integer.map { $0 == 1 },
            createdAt: Date(timeIntervalSince1970: row.column("created_at")?.double ?? 0),
            updatedAt: Date(timeIntervalSince1970: row.column("updated_at")?.double ?? 0))
    }
}
