import Foundation
import LatchkeyAPI
import LatchkeyServer
import PostgresNIO

/// Second factors: each operation is a transaction that reads its facts under row locks, lets
/// `Verdicts` decide, and writes. A code sent to a challenge locks the challenge, the user's wait
/// and the factor (or recovery code) it matched, in that order, so two nodes handed the same code
/// at once accept it once: the second reads the step the first stored once the lock is released.
extension PostgresStore {
    /// See `LatchkeyStore.addFactor`.
    package func addFactor(_ factor: NewFactor, pendingSince: Date, limit: Int, now: Date) async throws -> Bool {
        try await transaction("add factor") { connection in
            // The user's row lock orders concurrent additions, so the count below holds.
            guard
                try await !connection.rows("SELECT 1 FROM users WHERE id = \(factor.userID) FOR UPDATE").isEmpty
            else { return false }
            try await connection.run(
                """
                DELETE FROM factors WHERE user_id = \(factor.userID) AND activated_at IS NULL
                    AND created_at < \(pendingSince)
                """)
            let held =
                try await connection.rows("SELECT count(*) FROM factors WHERE user_id = \(factor.userID)")
                .first?.decode(Int.self) ?? 0
            guard held < limit else { return false }
            try await connection.run(
                """
                INSERT INTO factors (id, user_id, type, display_name, secret, created_at)
                VALUES (\(factor.id), \(factor.userID), \(factor.type.rawValue), \(factor.displayName), \(factor.secret),
                    \(factor.createdAt))
                """)
            try await Self.record(
                .factor(.factorEnrolled, userID: factor.userID, factorID: factor.id, factorType: factor.type),
                at: now, connection)
            return true
        }
    }

    /// See `LatchkeyStore.factors(userID:)`.
    package func factors(userID: String) async throws -> [StoredFactor] {
        try await withConnection("factors") { connection in try await Self.factors(of: userID, connection) }
    }

    /// See `LatchkeyStore.activateFactor`.
    package func activateFactor(
        id: String, userID: String, step: Int64, recoveryCodes: [Data], now: Date
    ) async throws -> Bool? {
        try await transaction("activate factor") { connection in
            // The user's row lock: two factors activated at once agree on which was first.
            try await connection.run("SELECT 1 FROM users WHERE id = \(userID) FOR UPDATE")
            let first = try await Self.activeFactors(of: userID, connection) == 0
            guard
                let type = try await connection.rows(
                    """
                    UPDATE factors SET activated_at = \(now), last_step = \(step)
                    WHERE id = \(id) AND user_id = \(userID) AND activated_at IS NULL RETURNING type
                    """
                ).first?.decode(String.self)
            else { return nil }
            if first { try await Self.replaceRecoveryCodes(of: userID, with: recoveryCodes, now: now, connection) }
            try await Self.record(
                .factor(
                    .factorActivated, userID: userID, factorID: id, factorType: FactorType(rawValue: type),
                    extra: ["recovery_codes_issued": .bool(first)]), at: now, connection)
            return first
        }
    }

    /// See `LatchkeyStore.failFactorVerification`.
    package func failFactorVerification(id: String, userID: String, limit: Int) async throws -> Bool {
        try await transaction("fail factor verification") { connection in
            guard
                let failed = try await connection.rows(
                    """
                    UPDATE factors SET failed_verifications = failed_verifications + 1
                    WHERE id = \(id) AND user_id = \(userID) AND activated_at IS NULL RETURNING failed_verifications
                    """
                ).first?.decode(Int.self)
            else { return false }
            guard failed < limit else {
                try await connection.run("DELETE FROM factors WHERE id = \(id)")
                return false
            }
            return true
        }
    }

    /// See `LatchkeyStore.removeFactor`.
    package func removeFactor(id: String, userID: String, now: Date) async throws -> Bool {
        try await transaction("remove factor") { connection in
            try await connection.run("SELECT 1 FROM users WHERE id = \(userID) FOR UPDATE")
            guard
                let (type, active) = try await connection.rows(
                    """
                    DELETE FROM factors WHERE id = \(id) AND user_id = \(userID)
                    RETURNING type, activated_at IS NOT NULL
                    """
                ).first?.decode((String, Bool).self)
            else { return false }
            if active {
                if try await Self.activeFactors(of: userID, connection) == 0 {
                    try await Self.forgetSecondFactor(of: userID, connection)
                }
                try await Self.record(
                    .factor(
                        .factorRemoved, userID: userID, factorID: id, factorType: FactorType(rawValue: type),
                        extra: ["by": .string(AuditEvent.Actor.user.rawValue)]), at: now, connection)
            }
            return true
        }
    }

    /// See `LatchkeyStore.removeFactors`.
    package func removeFactors(userID: String, now: Date, by actor: AuditEvent.Actor) async throws -> Int {
        try await transaction("remove factors") { connection in
            let removed = try await connection.rows("DELETE FROM factors WHERE user_id = \(userID) RETURNING 1").count
            try await Self.forgetSecondFactor(of: userID, connection)
            if removed > 0 {
                try await Self.record(
                    .factor(
                        .factorRemoved, userID: userID, factorID: nil, factorType: nil,
                        extra: ["by": .string(actor.rawValue), "factors_removed": .int(removed)]), at: now, connection)
            }
            return removed
        }
    }

    /// See `LatchkeyStore.replaceRecoveryCodes`.
    package func replaceRecoveryCodes(userID: String, hashes: [Data], now: Date) async throws -> Bool {
        try await transaction("replace recovery codes") { connection in
            try await connection.run("SELECT 1 FROM users WHERE id = \(userID) FOR UPDATE")
            guard try await Self.activeFactors(of: userID, connection) > 0 else { return false }
            try await Self.replaceRecoveryCodes(of: userID, with: hashes, now: now, connection)
            try await Self.record(
                .factor(.recoveryCodesRegenerated, userID: userID, factorID: nil, factorType: nil), at: now, connection)
            return true
        }
    }

    /// See `LatchkeyStore.recoveryCodesLeft`.
    package func recoveryCodesLeft(userID: String) async throws -> Int {
        try await withConnection("recovery codes left") { connection in
            try await Self.recoveryCodesLeft(of: userID, connection)
        }
    }

    /// See `LatchkeyStore.recoveryCodeSalts`.
    package func recoveryCodeSalts(userID: String) async throws -> [String] {
        try await withConnection("recovery code salts") { connection in
            try await connection.rows(
                """
                SELECT DISTINCT COALESCE(salt, user_id) FROM recovery_codes
                WHERE user_id = \(userID) AND used_at IS NULL ORDER BY 1
                """
            ).map { try $0.decode(String.self) }
        }
    }

    /// See `LatchkeyStore.createFactorChallenge`.
    package func createFactorChallenge(_ challenge: NewFactorChallenge, userID: String) async throws -> Bool {
        try await transaction("create factor challenge") { connection in
            guard let sessionID = challenge.sessionID,
                try await !connection.rows(
                    """
                    SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
                    WHERE s.id = \(sessionID) AND s.user_id = \(userID) AND s.revoked_at IS NULL AND NOT u.disabled
                        AND s.expires_at > \(challenge.createdAt)
                    FOR UPDATE OF s
                    """
                ).isEmpty,
                try await Self.activeFactors(of: userID, connection) > 0
            else { return false }
            // One step-up at a time per session (see `SQLiteStore.createFactorChallenge`).
            try await connection.run(
                """
                DELETE FROM factor_challenges WHERE session_id = \(sessionID)
                    AND purpose = \(FactorChallengePurpose.stepUp.rawValue) AND spent_at IS NULL
                """)
            try await Self.insert(challenge, userID: userID, connection)
            return true
        }
    }

    /// See `LatchkeyStore.factorChallenge(hash:)`.
    package func factorChallenge(hash: Data) async throws -> StoredFactorChallenge? {
        try await withConnection("factor challenge") { connection in
            guard
                let (userID, purpose, sessionID, plan, expiresAt, attempts, spent) = try await connection.rows(
                    """
                    SELECT user_id, purpose, session_id, plan, expires_at, attempts, spent_at IS NOT NULL
                    FROM factor_challenges WHERE hash = \(hash)
                    """
                ).first?.decode((String, String, String?, String, Date, Int, Bool).self),
                let purpose = FactorChallengePurpose(rawValue: purpose)
            else { return nil }
            return StoredFactorChallenge(
                userID: userID, purpose: purpose, sessionID: sessionID, plan: plan, expiresAt: expiresAt,
                attempts: attempts, spent: spent)
        }
    }

    /// See `LatchkeyStore.attemptFactorChallenge`.
    package func attemptFactorChallenge(
        hash: Data, proof: FactorProof, action: FactorChallengeAction, maximumAttempts: Int, now: Date
    ) async throws -> FactorAttemptOutcome {
        try await transaction("attempt factor challenge") { connection in
            // The user's row first, as every factor operation and a disable take it: attempts of one
            // person on several challenges count one after another (a row lock on a lockout row that
            // does not exist yet would not order them), and no lock is taken in another order.
            guard
                let owner = try await connection.rows(
                    "SELECT user_id FROM factor_challenges WHERE hash = \(hash)"
                ).first?.decode(String.self)
            else { return .challengeInvalid }
            let disabled = try await connection.rows("SELECT disabled FROM users WHERE id = \(owner) FOR UPDATE")
                .first?.decode(Bool.self)
            guard
                let (userID, purpose, sessionID, expiresAt, attempts, spent) = try await connection.rows(
                    """
                    SELECT user_id, purpose, session_id, expires_at, attempts, spent_at IS NOT NULL
                    FROM factor_challenges WHERE hash = \(hash) FOR UPDATE
                    """
                ).first?.decode((String, String, String?, Date, Int, Bool).self)
            else { return .challengeInvalid }
            var facts = FactorAttemptFacts(spent: spent, expired: expiresAt <= now, attempts: attempts)
            facts.ended = disabled != false || userID != owner
            var method: SessionMethod?
            if purpose == FactorChallengePurpose.stepUp.rawValue {
                let session = try await connection.rows(
                    """
                    SELECT user_id, revoked_at IS NOT NULL OR expires_at <= \(now), method FROM sessions
                    WHERE id = \(sessionID) FOR UPDATE
                    """
                ).first?.decode((String, Bool, String?).self)
                facts.ended = facts.ended || session == nil || session?.1 == true || session?.0 != userID
                method = session?.2.flatMap(SessionMethod.init(rawValue:))
            }
            if let (failures, lockedUntil) = try await connection.rows(
                "SELECT failures, locked_until FROM factor_lockouts WHERE user_id = \(userID) FOR UPDATE"
            ).first?.decode((Int, Date?).self) {
                facts.failuresInARow = failures
                facts.lockedUntil = lockedUntil
            }
            var matchedCode: Data?
            switch proof {
            case .totp(let factorID, let step):
                facts.proofAccepted = try await !connection.rows(
                    """
                    SELECT 1 FROM factors WHERE id = \(factorID) AND user_id = \(userID) AND activated_at IS NOT NULL
                        AND (last_step IS NULL OR last_step < \(step)) FOR UPDATE
                    """
                ).isEmpty
            case .recoveryCode(let hashes):
                for hash in hashes where matchedCode == nil {
                    let found = try await !connection.rows(
                        """
                        SELECT 1 FROM recovery_codes WHERE user_id = \(userID) AND hash = \(hash) AND used_at IS NULL
                        FOR UPDATE
                        """
                    ).isEmpty
                    if found { matchedCode = hash }
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
                try await connection.run("UPDATE factor_challenges SET spent_at = \(now) WHERE hash = \(hash)")
                return .ended
            case .fail(_, let locksUntil):
                try await connection.run(
                    "UPDATE factor_challenges SET attempts = attempts + 1 WHERE hash = \(hash)")
                try await connection.run(
                    """
                    INSERT INTO factor_lockouts (user_id, failures, locked_until) VALUES (\(userID), 1, \(locksUntil))
                    ON CONFLICT (user_id) DO UPDATE SET failures = factor_lockouts.failures + 1,
                        locked_until = COALESCE(EXCLUDED.locked_until, factor_lockouts.locked_until)
                    """)
                if let locksUntil {
                    try await Self.record(
                        .factor(
                            .factorLocked, userID: userID, factorID: nil, factorType: nil,
                            extra: [
                                "failures": .int(facts.failuresInARow + 1),
                                "until": .int(Int(locksUntil.timeIntervalSince1970)),
                            ]), at: now, connection)
                }
                return .wrong(attemptsLeft: max(0, maximumAttempts - attempts - 1))
            case .pass:
                break
            }
            try await connection.run("UPDATE factor_challenges SET spent_at = \(now) WHERE hash = \(hash)")
            try await connection.run("DELETE FROM factor_lockouts WHERE user_id = \(userID)")
            let by: SecondFactorKind
            var left: Int?
            switch proof {
            case .totp(let factorID, let step):
                by = .totp
                try await connection.run(
                    "UPDATE factors SET last_step = \(step), last_used_at = \(now) WHERE id = \(factorID)")
            case .recoveryCode:
                guard let code = matchedCode else {
                    throw PostgresStoreError(
                        operation: "attempt factor challenge", sqlState: "", message: "no recovery code matched")
                }
                by = .recoveryCode
                try await connection.run(
                    "UPDATE recovery_codes SET used_at = \(now) WHERE user_id = \(userID) AND hash = \(code)")
                left = try await Self.recoveryCodesLeft(of: userID, connection)
            case .none:
                throw PostgresStoreError(
                    operation: "attempt factor challenge", sqlState: "", message: "no proof passed")
            }
            switch action {
            case .openSession(var session, let identity):
                session.secondFactor = by
                try await Self.open(session, userID: userID, identity: identity, connection)
            case .storeCode(var code, let identity):
                code.secondFactor = by
                try await Self.store(code, userID: userID, identity: identity, now: now, connection)
            case .raiseSession(let refreshHash, let expiresAt):
                guard let sessionID else {
                    throw PostgresStoreError(
                        operation: "attempt factor challenge", sqlState: "", message: "a step-up without its session")
                }
                try await connection.run(
                    """
                    WITH raised AS (
                        UPDATE sessions SET second_factor = \(by.rawValue), expires_at = \(expiresAt), stepped_up_at = \(now)
                        WHERE id = \(sessionID)),
                    -- Deleted, not spent: see `SQLiteStore.raise`.
                    replaced AS (DELETE FROM refresh_tokens WHERE session_id = \(sessionID) AND used_at IS NULL)
                    INSERT INTO refresh_tokens (hash, session_id, created_at, expires_at)
                    VALUES (\(refreshHash), \(sessionID), \(now), \(expiresAt))
                    """)
            }
            var detail: [String: JSONValue] = ["by": .string(by.rawValue), "purpose": .string(purpose)]
            if let left { detail["recovery_codes_left"] = .int(left) }
            try await Self.record(
                AuditEvent(type: .factorUsed, userID: userID, detail: .object(detail)), at: now, connection)
            return .passed(userID: userID, by: by, recoveryCodesLeft: left, sessionMethod: method)
        }
    }

    /// See `LatchkeyStore.factorSecretsToReseal`.
    package func factorSecretsToReseal(sealedPrefix: Data, skip: Int, limit: Int) async throws -> [StoredFactor] {
        try await withConnection("factor secrets to reseal") { connection in
            try await connection.rows(
                """
                SELECT \(unescaped: Self.factorColumns) FROM factors
                WHERE substring(secret FROM 1 FOR \(sealedPrefix.count)::integer) <> \(sealedPrefix)
                ORDER BY id LIMIT \(max(limit, 0)) OFFSET \(max(skip, 0))
                """
            ).compactMap(Self.factor)
        }
    }

    /// See `LatchkeyStore.replaceFactorSecret`.
    package func replaceFactorSecret(id: String, old: Data, with sealed: Data) async throws -> Bool {
        try await withConnection("replace factor secret") { connection in
            try await !connection.rows(
                "UPDATE factors SET secret = \(sealed) WHERE id = \(id) AND secret = \(old) RETURNING 1"
            ).isEmpty
        }
    }

    // MARK: Helpers

    /// The user's factors, oldest first.
    static func factors(of userID: String, _ connection: PostgresConnection) async throws -> [StoredFactor] {
        try await connection.rows(
            "SELECT \(unescaped: factorColumns) FROM factors WHERE user_id = \(userID) ORDER BY created_at, id"
        ).compactMap(factor)
    }

    /// The columns `factor(_:)` reads.
    static let factorColumns = """
        id, user_id, type, display_name, secret, created_at, activated_at, last_step, last_used_at, failed_verifications
        """

    /// A factor from a row of `factorColumns`; `nil` for a kind this version does not know.
    static func factor(_ row: PostgresRow) throws -> StoredFactor? {
        let (id, userID, type, name, secret, created, activated, lastStep, lastUsed, failed) = try row.decode(
            (String, String, String, String?, Data, Date, Date?, Int64?, Date?, Int).self)
        guard let type = FactorType(rawValue: type) else { return nil }
        return StoredFactor(
            id: id, userID: userID, type: type, displayName: name, secret: secret, createdAt: created,
            activatedAt: activated, lastStep: lastStep, lastUsedAt: lastUsed, failedVerifications: failed)
    }

    /// How many active factors the user has (what `Verdicts.sessionOpening` decides on).
    static func activeFactors(of userID: String, _ connection: PostgresConnection) async throws -> Int {
        try await connection.rows(
            "SELECT count(*) FROM factors WHERE user_id = \(userID) AND activated_at IS NOT NULL"
        ).first?.decode(Int.self) ?? 0
    }

    /// Decides whether a link opens its session for `userID` (`Verdicts.sessionOpening`) and, when
    /// it is held back, stores `challenge`.
    static func opening(
        for userID: String, proven: SecondFactorKind?, challenge: NewFactorChallenge?,
        _ connection: PostgresConnection
    ) async throws -> SessionOpening {
        let opening = Verdicts.sessionOpening(
            activeFactors: proven == nil ? try await activeFactors(of: userID, connection) : 0, proven: proven)
        if opening == .hold, let challenge { try await insert(challenge, userID: userID, connection) }
        return opening
    }

    /// Stores a challenge for `userID`.
    static func insert(
        _ challenge: NewFactorChallenge, userID: String, _ connection: PostgresConnection
    ) async throws {
        try await connection.run(
            """
            INSERT INTO factor_challenges (hash, user_id, purpose, session_id, plan, created_at, expires_at)
            VALUES (\(challenge.hash), \(userID), \(challenge.purpose.rawValue), \(challenge.sessionID),
                \(challenge.plan), \(challenge.createdAt), \(challenge.expiresAt))
            """)
    }

    /// Replaces the user's recovery codes.
    static func replaceRecoveryCodes(
        of userID: String, with hashes: [Data], now: Date, _ connection: PostgresConnection
    ) async throws {
        try await connection.run("DELETE FROM recovery_codes WHERE user_id = \(userID)")
        for hash in Set(hashes) {
            try await connection.run(
                "INSERT INTO recovery_codes (user_id, hash, created_at) VALUES (\(userID), \(hash), \(now))")
        }
    }

    /// Unused recovery codes of the user.
    static func recoveryCodesLeft(of userID: String, _ connection: PostgresConnection) async throws -> Int {
        try await connection.rows(
            "SELECT count(*) FROM recovery_codes WHERE user_id = \(userID) AND used_at IS NULL"
        ).first?.decode(Int.self) ?? 0
    }

    /// What goes with a user's last active factor: recovery codes, open challenges, the wait.
    static func forgetSecondFactor(of userID: String, _ connection: PostgresConnection) async throws {
        try await connection.run(
            """
            WITH codes AS (DELETE FROM recovery_codes WHERE user_id = \(userID)),
            challenges AS (DELETE FROM factor_challenges WHERE user_id = \(userID))
            DELETE FROM factor_lockouts WHERE user_id = \(userID)
            """)
    }
}
