import Foundation

/// A kind of second factor.
package enum FactorType: String, Sendable, Codable, CaseIterable {
    /// An authenticator app's time-based codes (RFC 6238).
    case totp
}

/// What proved a session's second factor, as the session and its access tokens keep it.
package enum SecondFactorKind: String, Sendable, Codable, CaseIterable {
    /// A TOTP code.
    case totp
    /// A recovery code.
    case recoveryCode = "recovery_code"

    /// Its `amr` value (RFC 8176 §2 where one fits: `otp`; `rcode` is Latchkey's, documented).
    package var amr: String {
        switch self {
        case .totp: "otp"
        case .recoveryCode: "rcode"
        }
    }
}

/// A factor to add, pending until its first code is verified.
package struct NewFactor: Sendable, Equatable {
    /// Random id, shown to the user's apps.
    package var id: String
    /// Its owner.
    package var userID: String
    /// Its kind.
    package var type: FactorType
    /// A name the person chose ("Work phone"), bounded.
    package var displayName: String?
    /// The secret as stored: sealed under the key-encryption key (`FactorSecretSealing`).
    package var secret: Data
    /// When it was added.
    package var createdAt: Date

    /// Creates a factor record.
    package init(id: String, userID: String, type: FactorType, displayName: String?, secret: Data, createdAt: Date) {
        self.id = id
        self.userID = userID
        self.type = type
        self.displayName = displayName
        self.secret = secret
        self.createdAt = createdAt
    }
}

/// A factor as stored.
package struct StoredFactor: Sendable, Equatable {
    /// Its id.
    package var id: String
    /// Its owner.
    package var userID: String
    /// Its kind.
    package var type: FactorType
    /// The person's name for it.
    package var displayName: String?
    /// The sealed secret.
    package var secret: Data
    /// When it was added.
    package var createdAt: Date
    /// When its first code was verified; `nil` while pending (it then guards nothing).
    package var activatedAt: Date?
    /// The newest step a code of it was accepted for: no code of that step or an earlier one is
    /// accepted again (RFC 6238 §5.2), on any node.
    package var lastStep: Int64?
    /// When it last let someone in.
    package var lastUsedAt: Date?
    /// Wrong codes sent to verify it while pending.
    package var failedVerifications: Int

    /// Whether it guards sign-ins.
    package var active: Bool { activatedAt != nil }

    /// Creates a stored factor.
    package init(
        id: String, userID: String, type: FactorType, displayName: String?, secret: Data, createdAt: Date,
        activatedAt: Date?, lastStep: Int64?, lastUsedAt: Date?, failedVerifications: Int
    ) {
        self.id = id
        self.userID = userID
        self.type = type
        self.displayName = displayName
        self.secret = secret
        self.createdAt = createdAt
        self.activatedAt = activatedAt
        self.lastStep = lastStep
        self.lastUsedAt = lastUsedAt
        self.failedVerifications = failedVerifications
    }
}

/// What a challenge is for.
package enum FactorChallengePurpose: String, Sendable, Codable {
    /// A sign-in held back until the second factor (`401 second_factor_required`).
    case signIn = "sign_in"
    /// A signed-in session raising itself to `aal` 2 (`POST /v1/users/me/factors/challenge`).
    case stepUp = "step_up"
}

/// A challenge to store: the server keeps only the hash of what the client holds.
package struct NewFactorChallenge: Sendable, Equatable {
    /// SHA-256 of the challenge the client is given.
    package var hash: Data
    /// What it is for.
    package var purpose: FactorChallengePurpose
    /// The session a step-up raises (`nil` for a sign-in).
    package var sessionID: String?
    /// What passing it does, as the server wrote it (`FactorChallengePlan`, JSON): the store keeps
    /// it and gives it back, never reads it.
    package var plan: String
    /// When it was issued.
    package var createdAt: Date
    /// When it dies unused.
    package var expiresAt: Date

    /// Creates a challenge record.
    package init(
        hash: Data, purpose: FactorChallengePurpose, sessionID: String? = nil, plan: String, createdAt: Date,
        expiresAt: Date
    ) {
        self.hash = hash
        self.purpose = purpose
        self.sessionID = sessionID
        self.plan = plan
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// A challenge as stored.
package struct StoredFactorChallenge: Sendable, Equatable {
    /// The user who must pass it.
    package var userID: String
    /// What it is for.
    package var purpose: FactorChallengePurpose
    /// The session a step-up raises.
    package var sessionID: String?
    /// The server's plan (`NewFactorChallenge.plan`).
    package var plan: String
    /// When it dies.
    package var expiresAt: Date
    /// Wrong codes sent to it.
    package var attempts: Int
    /// Whether it was passed (or given up on) already.
    package var spent: Bool

    /// Creates a stored challenge.
    package init(
        userID: String, purpose: FactorChallengePurpose, sessionID: String?, plan: String, expiresAt: Date,
        attempts: Int, spent: Bool
    ) {
        self.userID = userID
        self.purpose = purpose
        self.sessionID = sessionID
        self.plan = plan
        self.expiresAt = expiresAt
        self.attempts = attempts
        self.spent = spent
    }
}

/// What the server made of the code sent to a challenge (it unseals the secrets; the store never
/// sees them), for the store to check against what it holds in the same transaction.
package enum FactorProof: Sendable, Equatable {
    /// A code matched this factor's secret at `step`: accepted only when the factor is the user's,
    /// active, and `step` is newer than its last accepted one.
    case totp(factorID: String, step: Int64)
    /// A recovery code's hashes, one per salt the user's codes have (`recoveryCodeSalts`):
    /// accepted only when the user holds one of them unused.
    case recoveryCode(hashes: [Data])
    /// Nothing matched.
    case none
}

/// What passing a challenge does, in the same transaction.
package enum FactorChallengeAction: Sendable {
    /// Opens the session a sign-in held back, recording `identity` as the one that opened it.
    case openSession(NewSession, identity: (provider: String, subject: String)?)
    /// Stores the Easy Login code a sign-in held back.
    case storeCode(NewAuthorizationCode, identity: (provider: String, subject: String))
    /// Raises the challenge's session to a second factor, its unspent refresh token replaced by this
    /// one (the old one is forgotten, so presenting it is refused without ending the session): a
    /// session whose assurance rises gets tokens no one held before.
    case raiseSession(refreshTokenHash: Data, refreshExpiresAt: Date)
}

/// The outcome of a code sent to a challenge.
package enum FactorAttemptOutcome: Sendable, Equatable {
    /// Passed: the action was carried out. `recoveryCodesLeft` after a recovery code;
    /// `sessionMethod`: how a step-up's session opened (its new tokens' `amr`).
    case passed(userID: String, by: SecondFactorKind, recoveryCodesLeft: Int?, sessionMethod: SessionMethod? = nil)
    /// Wrong (or replayed); the challenge takes `attemptsLeft` more (0: it died).
    case wrong(attemptsLeft: Int)
    /// Unknown, spent, expired or out of attempts: nothing counted.
    case challengeInvalid
    /// The user's attempts wait until then: nothing counted, not even checked.
    case locked(until: Date)
    /// The user is disabled or gone, or the step-up's session ended: the challenge is spent.
    case ended

    /// The `outcome` label of `latchkey_second_factor_attempts_total`.
    package var metricName: String {
        switch self {
        case .passed: "passed"
        case .wrong: "wrong_code"
        case .challengeInvalid: "challenge_invalid"
        case .locked: "locked"
        case .ended: "ended"
        }
    }
}

/// Thrown by a sign-in (or a link that opens a session) **after it committed**: the user has an
/// active second factor, so instead of the session or code the login asked for, the store kept
/// the login's challenge (`LoginRecord.challenge`). The identity's sign-in itself is recorded.
package struct SecondFactorRequired: Error, Sendable, Equatable {
    /// The user who must pass the challenge.
    package var userID: String

    /// Creates the signal.
    package init(userID: String) { self.userID = userID }
}
