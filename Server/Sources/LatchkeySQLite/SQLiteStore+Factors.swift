import Foundation
import LatchkeyAPI
import LatchkeyServer

/// Second factors: each operation reads what it needs, lets `Verdicts` decide, and writes, in one
/// transaction on SQLite's one connection (nothing runs between the read and the writes).
extension SQLiteStore {
    /// See `LatchkeyStore.addFactor`.
    package func addFactor(_ factor: NewFactor, pendingSince: Date, limit: Int, now: Date) async throws -> Bool {
        try await transaction { db in
            guard try Self.userRow(factor.userID, db) != nil else { return false }
            try db.execute(
                "DELETE FROM factors WHERE user_id = ? AND activated_at IS NULL AND created_at < ?",
                [.text(factor.userID), .float(pendingSince.timeIntervalSince1970)])
            let held = try db.query("SELECT COUNT(*) AS n FROM factors WHERE user_id = ?", [.text(factor.userID)])
            guard (held.first?.column("n")?.integer ?? 0) < limit else { return false }
            try db.execute(
                """
                INSERT INTO factors (id, user_id, type, display_name, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(factor.id), .text(factor.userID), .text(factor.type.rawValue),
                    .optionalText(factor.displayName), .blob(factor.secret),
                    .float(factor.createdAt.timeIntervalSince1970),
                ])
            try Self.record(
                .factor(.factorEnrolled, userID: factor.userID, factorID: factor.id, factorType: factor.type),
                at: now, db)
            return true
        }
    }

    /// See `LatchkeyStore.factors(userID:)`.
    package func factors(userID: String) async throws -> [StoredFactor] {
        try await transaction { db in try Self.factors(of: userID, db) }
    }

    /// See `LatchkeyStore.activateFactor`.
    package func activateFactor(
        id: String, userID: String, step: Int64, recoveryCodes: [Data], now: Date
    ) async throws -> Bool? {
        try await transaction { db in
            let first = try Self.activeFactors(of: userID, db) == 0
            let activated = try db.query(
                """
                UPDATE factors SET activated_at = ?, last_step = ?
                WHERE id = ? AND user_id = ? AND activated_at IS NULL RETURNING type
                """,
                [.float(now.timeIntervalSince1970), .integer(Int(step)), .text(id), .text(userID)])
            guard let row = activated.first else { return nil }
            if first { try Self.replaceRecoveryCodes(of: userID, with: recoveryCodes, now: now, db) }
            try Self.record(
                .factor(
                    .factorActivated, userID: userID, factorID: id,
                    factorType: row.column("type")?.string.flatMap(FactorType.init(rawValue:)),
                    extra: ["recovery_codes_issued": .bool(first)]), at: now, db)
            return first
        }
    }

    /// See `LatchkeyStore.failFactorVerification`.
    package func failFactorVerification(id: String, userID: String, limit: Int) async throws -> Bool {
        try await transaction { db in
            guard
                let failed = try db.query(
                    """
                    UPDATE factors SET failed_verifications = failed_verifications + 1
                    WHERE id = ? AND user_id = ? AND activated_at IS NULL RETURNING failed_verifications
                    """, [.text(id), .text(userID)]
                ).first?.column("failed_verifications")?.integer
            else { return false }
            guard failed < limit else {
                try db.execute("DELETE FROM factors WHERE id = ?", [.text(id)])
                return false
            }
            return true
        }
    }

    /// See `LatchkeyStore.removeFactor`.
    package func removeFactor(id: String, userID: String, now: Date) async throws -> Bool {
        try await transaction { db in
            guard
                let removed = try db.query(
                    "DELETE FROM factors WHERE id = ? AND user_id = ? RETURNING type, activated_at",
                    [.text(id), .text(userID)]
                ).first
            else { return false }
            if removed.column("activated_at")?.isNull == false {
                if try Self.activeFactors(of: userID, db) == 0 { try Self.forgetSecondFactor(of: userID, db) }
                try Self.record(
                    .factor(
                        .factorRemoved, userID: userID, factorID: id,
                        factorType: removed.column("type")?.string.flatMap(FactorType.init(rawValue:)),
                        extra: ["by": .string(AuditEvent.Actor.user.rawValue)]), at: now, db)
            }
            return true
        }
    }

    /// See `LatchkeyStore.removeFactors`.
    package func removeFactors(userID: String, now: Date, by actor: AuditEvent.Actor) async throws -> Int {
        try await transaction { db in
            let removed = try db.query("DELETE FROM factors WHERE user_id = ? RETURNING id", [.text(userID)]).count
            try Self.forgetSecondFactor(of: userID, db)
            if removed > 0 {
                try Self.record(
                    .factor(
                        .factorRemoved, userID: userID, factorID: nil, factorType: nil,
                        extra: ["by": .string(actor.rawValue), "factors_removed": .int(removed)]), at: now, db)
            }
            return removed
        }
    }

    /// See `LatchkeyStore.replaceRecoveryCodes`.
    package func replaceRecoveryCodes(userID: String, hashes: [Data], now: Date) async throws -> Bool {
        try await transaction { db in
            guard try Self.activeFactors(of: userID, db) > 0 else { return false }
            try Self.replaceRecoveryCodes(of: userID, with: hashes, now: now, db)
            try Self.record(
                .factor(.recoveryCodesRegenerated, userID: userID, factorID: nil, factorType: nil), at: now, db)
            return true
        }
    }

    /// See `LatchkeyStore.recoveryCodesLeft`.
    package func recoveryCodesLeft(userID: String) async throws -> Int {
        try await transaction { db in try Self.recoveryCodesLeft(of: userID, db) }
    }

    /// See `LatchkeyStore.createFactorChallenge`.
    package func createFactorChallenge(_ challenge: NewFactorChallenge, userID: String) async throws -> Bool {
        try await transaction { db in
            guard let sessionID = challenge.sessionID, let session = try Self.session(sessionID, db),
                session.userID == userID, !session.revoked, !session.userDisabled,
                try Self.sessionLive(sessionID, at: challenge.createdAt, db),
                try Self.activeFactors(of: userID, db) > 0
            else { return false }
            // One step-up at a time per session: a new one replaces the last, so a session asking
            // again and again stores nothing more.
            try db.execute(
                "DELETE FROM factor_challenges WHERE session_id = ? AND purpose = ? AND spent_at IS NULL",
                [.text(sessionID), .text(FactorChallengePurpose.stepUp.rawValue)])
            try Self.insert(challenge, userID: userID, db)
            return true
        }
    }

    /// See `LatchkeyStore.factorChallenge(hash:)`.
    package func factorChallenge(hash: Data) async throws -> StoredFactorChallenge? {
        try await transaction { db in
            try db.query(
                """
                SELECT user_id, purpose, session_id, plan, expires_at, attempts, spent_at
                FROM factor_challenges WHERE hash = ?
                """, [.blob(hash)]
            ).first.flatMap { row in
                guard let userID = row.column("user_id")?.string,
                    let purpose = row.column("purpose")?.string.flatMap(FactorChallengePurpose.init(rawValue:))
                else { return nil }
                return StoredFactorChallenge(
                    userID: userID, purpose: purpose, sessionID: row.column("session_id")?.string,
                    plan: row.column("plan")?.string ?? "",
                    expiresAt: Date(timeIntervalSince1970: row.column("expires_at")?.double ?? 0),
                    attempts: row.column("attempts")?.integer ?? 0, spent: row.column("spent_at")?.isNull == false)
            }
        }
    }

    /// See `LatchkeyStore.attemptFactorChallenge`.
    package func attemptFactorChallenge(
        hash: Data, proof: FactorProof, action: FactorChallengeAction, maximumAttempts: Int, now: Date
    ) async throws -> FactorAttemptOutcome {
        try await transaction { db in
            guard
                let row = try db.query(
                    "SELECT user_id, purpose, session_id, expires_at, attempts, spent_at FROM factor_challenges WHERE hash = ?",
                    [.blob(hash)]
                ).first, let userID = row.column("user_id")?.string
            else { return .challengeInvalid }
            let stamp = SQLiteValue.float(now.timeIntervalSince1970)
            let attempts = row.column("attempts")?.integer ?? 0
            var facts = FactorAttemptFacts(
                spent: row.column("spent_at")?.isNull == false,
                expired: (row.column("expires_at")?.double ?? 0) <= now.timeIntervalSince1970, attempts: attempts)
            let user = try Self.userRow(userID, db)
            facts.ended = user == nil || user?.disabled == true
            let sessionID = row.column("session_id")?.string
            var method: SessionMethod?
            if row.column("purpose")?.string == FactorChallengePurpose.stepUp.rawValue {
                let session = try sessionID.flatMap { try Self.session($0, db) }
                let live = try sessionID.map { try Self.sessionLive($0, at: now, db) } ?? false
                facts.ended =
                    facts.ended || session == nil || session?.revoked == true || session?.userID != userID || !live
                method = session?.assurance.method
            }
            let lockout = try db.query(
                "SELECT failures, locked_until FROM factor_lockouts WHERE user_id = ?", [.text(userID)]
            ).first
            facts.failuresInARow = lockout?.column("failures")?.integer ?? 0
            facts.lockedUntil = lockout?.column("locked_until")?.double.map(Date.init(timeIntervalSince1970:))
            var matchedCode: Data?
            switch proof {
            case .totp(let factorID, let step):
                facts.proofAccepted = try !db.query(
                    """
                    SELECT 1 FROM factors WHERE id = ? AND user_id = ? AND activated_at IS NOT NULL
                        AND (last_step IS NULL OR last_step < ?)
                    """, [.text(factorID), .text(userID), .integer(Int(step))]
                ).isEmpty
            case .recoveryCode(let hashes):
                matchedCode = try hashes.first { hash in
                    try !db.query(
                        "SELECT 1 FROM recovery_codes WHERE user_id = ? AND hash = ? AND used_at IS NULL",
                        [.text(userID), .blob(hash)]
                    ).isEmpty
                }
                facts.proofAccepted = matchedCode != nil
            case .none: break
            }
            switch Verdicts.factorAttempt(facts, maximumAttempts: maximumAttempts, now: now) {
            case .refuseInvalid:
                return .challengeInvalid
            case .refuseLocked(let until):
                return .locked(until: until)
            case .refuseEnded:
                try db.execute("UPDATE factor_challenges SET spent_at = ? WHERE hash = ?", [stamp, .blob(hash)])
                return .ended
            case .fail(_, let locksUntil):
                try db.execute(
                    "UPDATE factor_challenges SET attempts = attempts + 1 WHERE hash = ?", [.blob(hash)])
                try db.execute(
                    """
                    INSERT INTO factor_lockouts (user_id, failures, locked_until) VALUES (?, 1, ?)
                    ON CONFLICT (user_id) DO UPDATE SET failures = failures + 1,
                        locked_until = COALESCE(excluded.locked_until, locked_until)
                    """, [.text(userID), locksUntil.map { .float($0.timeIntervalSince1970) } ?? .null])
                if let locksUntil {
                    try Self.record(
                        .factor(
                            .factorLocked, userID: userID, factorID: nil, factorType: nil,
                            extra: [
                                "failures": .int(facts.failuresInARow + 1),
                                "until": .int(Int(locksUntil.timeIntervalSince1970)),
                            ]), at: now, db)
                }
                return .wrong(attemptsLeft: max(0, maximumAttempts - attempts - 1))
            case .pass:
                break
            }
            try db.execute("UPDATE factor_challenges SET spent_at = ? WHERE hash = ?", [stamp, .blob(hash)])
            try db.execute("DELETE FROM factor_lockouts WHERE user_id = ?", [.text(userID)])
            let by: SecondFactorKind
            var left: Int?
            switch proof {
            case .totp(let factorID, let step):
                by = .totp
                try db.execute(
                    "UPDATE factors SET last_step = ?, last_used_at = ? WHERE id = ?",
                    [.integer(Int(step)), stamp, .text(factorID)])
            case .recoveryCode:
                guard let code = matchedCode else { throw SQLiteStoreError.inconsistent }
                by = .recoveryCode
                try db.execute(
                    "UPDATE recovery_codes SET used_at = ? WHERE user_id = ? AND hash = ?",
                    [stamp, .text(userID), .blob(code)])
                left = try Self.recoveryCodesLeft(of: userID, db)
            case .none:
                throw SQLiteStoreError.inconsistent
            }
            switch action {
            case .openSession(var session, let identity):
                session.secondFactor = by
                try Self.open(session, userID: userID, identity: identity, db)
            case .storeCode(var code, let identity):
                code.secondFactor = by
                try Self.store(code, userID: userID, identity: identity, now: now, db)
            case .raiseSession(let refreshHash, let expiresAt):
                guard let sessionID else { throw SQLiteStoreError.inconsistent }
                try Self.raise(
                    sessionID, to: by, refreshTokenHash: refreshHash, expiresAt: expiresAt, now: now, db)
            }
            var detail: [String: JSONValue] = [
                "by": .string(by.rawValue), "purpose": .string(row.column("purpose")?.string ?? ""),
            ]
            if let left { detail["recovery_codes_left"] = .int(left) }
            try Self.record(AuditEvent(type: .factorUsed, userID: userID, detail: .object(detail)), at: now, db)
            return .passed(userID: userID, by: by, recoveryCodesLeft: left, sessionMethod: method)
        }
    }

    /// See `LatchkeyStore.recoveryCodeSalts`.
    package func recoveryCodeSalts(userID: String) async throws -> [String] {
        try await transaction { db in
            try db.query(
                """
                SELECT DISTINCT COALESCE(salt, user_id) AS salt FROM recovery_codes
                WHERE user_id = ? AND used_at IS NULL ORDER BY 1
                """, [.text(userID)]
            ).compactMap { $0.column("salt")?.string }
        }
    }

    /// See `LatchkeyStore.factorSecretsToReseal`.
    package func factorSecretsToReseal(sealedPrefix: Data, skip: Int, limit: Int) async throws -> [StoredFactor] {
        try await transaction { db in
            try db.query(
                "SELECT \(Self.factorColumns) FROM factors WHERE substr(secret, 1, ?) != ? ORDER BY id LIMIT ? OFFSET ?",
                [.integer(sealedPrefix.count), .blob(sealedPrefix), .integer(max(limit, 0)), .integer(max(skip, 0))]
            ).compactMap(Self.factor)
        }
    }

    /// See `LatchkeyStore.replaceFactorSecret`.
    package func replaceFactorSecret(id: String, old: Data, with sealed: Data) async throws -> Bool {
        try await transaction { db in
            try !db.query(
                "UPDATE factors SET secret = ? WHERE id = ? AND secret = ? RETURNING 1",
                [.blob(sealed), .text(id), .blob(old)]
            ).isEmpty
        }
    }

    // MARK: Helpers

    /// The user's factors, oldest first, inside the caller's transaction.
    static func factors(of userID: String, _ db: SQLiteConnectionState) throws -> [StoredFactor] {
        try db.query(
            "SELECT \(factorColumns) FROM factors WHERE user_id = ? ORDER BY created_at, id", [.text(userID)]
        ).compactMap(factor)
    }

    /// The columns `factor(_:)` reads.
    static let factorColumns = """
        id, user_id, type, display_name, secret, created_at, activated_at, last_step, last_used_at,
            failed_verifications
        """

    /// A factor from a row of `factorColumns`; `nil` for a kind this version does not know.
    static func factor(_ row: SQLiteRow) -> StoredFactor? {
        guard let id = row.column("id")?.string, let userID = row.column("user_id")?.string,
            let type = row.column("type")?.string.flatMap(FactorType.init(rawValue:))
        else { return nil }
        return StoredFactor(
            id: id, userID: userID, type: type, displayName: row.column("display_name")?.string,
            secret: row.column("secret")?.blob ?? Data(),
            createdAt: Date(timeIntervalSince1970: row.column("created_at")?.double ?? 0),
            activatedAt: row.column("activated_at")?.double.map(Date.init(timeIntervalSince1970:)),
            lastStep: row.column("last_step")?.integer.map(Int64.init),
            lastUsedAt: row.column("last_used_at")?.double.map(Date.init(timeIntervalSince1970:)),
            failedVerifications: row.column("failed_verifications")?.integer ?? 0)
    }

    /// Whether the session has not expired at `now` (its newest refresh token still lives).
    static func sessionLive(_ id: String, at now: Date, _ db: SQLiteConnectionState) throws -> Bool {
        try !db.query(
            "SELECT 1 FROM sessions WHERE id = ? AND expires_at > ?", [.text(id), .float(now.timeIntervalSince1970)]
        ).isEmpty
    }

    /// How many active factors the user has (what `Verdicts.sessionOpening` decides on).
    static func activeFactors(of userID: String, _ db: SQLiteConnectionState) throws -> Int {
        try db.query(
            "SELECT COUNT(*) AS n FROM factors WHERE user_id = ? AND activated_at IS NOT NULL", [.text(userID)]
        ).first?.column("n")?.integer ?? 0
    }

    /// Decides whether a sign-in or link opens its session for `userID` (`Verdicts.sessionOpening`)
    /// and, when it is held back, stores `challenge`. For a session or code about to open.
    static func opening(
        for userID: String, proven: SecondFactorKind?, challenge: NewFactorChallenge?, _ db: SQLiteConnectionState
    ) throws -> SessionOpening {
        let opening = Verdicts.sessionOpening(
            activeFactors: proven == nil ? try activeFactors(of: userID, db) : 0, proven: proven)
        if opening == .hold, let challenge { try insert(challenge, userID: userID, db) }
        return opening
    }

    /// Stores a challenge for `userID`, inside the caller's transaction.
    static func insert(_ challenge: NewFactorChallenge, userID: String, _ db: SQLiteConnectionState) throws {
        try db.execute(
            """
            INSERT INTO factor_challenges (hash, user_id, purpose, session_id, plan, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .blob(challenge.hash), .text(userID), .text(challenge.purpose.rawValue),
                .optionalText(challenge.sessionID), .text(challenge.plan),
                .float(challenge.createdAt.timeIntervalSince1970), .float(challenge.expiresAt.timeIntervalSince1970),
            ])
    }

    /// Raises a session to a second factor: its unspent refresh token is replaced by a new one, so
    /// the token held before the step-up stops working. Deleted, not spent: presented later (a
    /// refresh racing the step-up, an extension's copy) it is refused as unknown, and the session,
    /// which a spent token's reuse would end, lives on in the new token.
    static func raise(
        _ sessionID: String, to factor: SecondFactorKind, refreshTokenHash: Data, expiresAt: Date, now: Date,
        _ db: SQLiteConnectionState
    ) throws {
        let stamp = SQLiteValue.float(now.timeIntervalSince1970)
        try db.execute(
            "UPDATE sessions SET second_factor = ?, expires_at = ?, stepped_up_at = ? WHERE id = ?",
            [.text(factor.rawValue), .float(expiresAt.timeIntervalSince1970), stamp, .text(sessionID)])
        try db.execute(
            "DELETE FROM refresh_tokens WHERE session_id = ? AND used_at IS NULL", [.text(sessionID)])
        try db.execute(
            "INSERT INTO refresh_tokens (hash, session_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
            [.blob(refreshTokenHash), .text(sessionID), stamp, .float(expiresAt.timeIntervalSince1970)])
    }

    /// Replaces the user's recovery codes, inside the caller's transaction.
    static func replaceRecoveryCodes(
        of userID: String, with hashes: [Data], now: Date, _ db: SQLiteConnectionState
    ) throws {
        try db.execute("DELETE FROM recovery_codes WHERE user_id = ?", [.text(userID)])
        for hash in Set(hashes) {
            try db.execute(
                "INSERT INTO recovery_codes (user_id, hash, created_at) VALUES (?, ?, ?)",
                [.text(userID), .blob(hash), .float(now.timeIntervalSince1970)])
        }
    }

    /// Unused recovery codes of the user.
    static func recoveryCodesLeft(of userID: String, _ db: SQLiteConnectionState) throws -> Int {
        try db.query(
            "SELECT COUNT(*) AS n FROM recovery_codes WHERE user_id = ? AND used_at IS NULL", [.text(userID)]
        ).first?.column("n")?.integer ?? 0
    }

    /// What goes with a user's last active factor: recovery codes, open challenges, the wait.
    static func forgetSecondFactor(of userID: String, _ db: SQLiteConnectionState) throws {
        try db.execute("DELETE FROM recovery_codes WHERE user_id = ?", [.text(userID)])
        try db.execute("DELETE FROM factor_challenges WHERE user_id = ?", [.text(userID)])
        try db.execute("DELETE FROM factor_lockouts WHERE user_id = ?", [.text(userID)])
    }
}
