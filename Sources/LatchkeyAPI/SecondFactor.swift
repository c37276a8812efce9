/// `POST /v1/users/me/factors`: adds a second factor, pending until a first code verifies it.
public struct FactorEnrollmentRequest: Codable, Sendable, Equatable {
    /// The kind of factor: `totp` (an authenticator app).
    public var type: String
    /// A name the person chooses ("Work phone"), shown when they pick a factor; at most 64
    /// characters.
    public var displayName: String?

    /// Creates an enrolment request.
    public init(type: String = "totp", displayName: String? = nil) {
        self.type = type
        self.displayName = displayName
    }

    /// The fields, as the server reads them.
    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case type
        case displayName
    }
}

/// The answer of `POST /v1/users/me/factors`: what the authenticator app needs, shown this once.
public struct FactorEnrollmentBody: Codable, Sendable, Equatable {
    /// The factor's id (`POST /v1/users/me/factors/{id}/verify` activates it).
    public var id: String
    /// `totp`.
    public var type: String
    /// The shared secret in base32 (RFC 4648), for typing into an authenticator app.
    public var secret: String
    /// The `otpauth://totp/…` URI, for a QR code an authenticator app scans.
    public var uri: String

    /// Creates an enrolment body.
    public init(id: String, type: String, secret: String, uri: String) {
        self.id = id
        self.type = type
        self.secret = secret
        self.uri = uri
    }
}

/// A code sent to verify a pending factor (`POST /v1/users/me/factors/{id}/verify`).
public struct FactorCodeRequest: Codable, Sendable, Equatable {
    /// The 6-digit code the authenticator app shows.
    public var code: String

    /// Creates a code request.
    public init(code: String) { self.code = code }

    /// The fields, as the server reads them.
    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case code
    }
}

/// One of the person's second factors (`GET /v1/users/me/factors`).
public struct FactorBody: Codable, Sendable, Equatable {
    /// Its id.
    public var id: String
    /// `totp`.
    public var type: String
    /// The person's name for it.
    public var displayName: String?
    /// `pending` (added, not verified yet: it guards nothing) or `active`.
    public var status: String
    /// When it was added, seconds since 1970.
    public var createdAt: Int
    /// When it was verified, seconds since 1970.
    public var activatedAt: Int?
    /// When it last let someone in, seconds since 1970.
    public var lastUsedAt: Int?

    /// Creates a factor body.
    public init(
        id: String, type: String, displayName: String?, status: String, createdAt: Int, activatedAt: Int?,
        lastUsedAt: Int?
    ) {
        self.id = id
        self.type = type
        self.displayName = displayName
        self.status = status
        self.createdAt = createdAt
        self.activatedAt = activatedAt
        self.lastUsedAt = lastUsedAt
    }
}

/// The answer of `GET /v1/users/me/factors`.
public struct FactorsBody: Codable, Sendable, Equatable {
    /// The person's factors, oldest first.
    public var factors: [FactorBody]
    /// How many unused recovery codes they hold.
    public var recoveryCodesLeft: Int

    /// Creates a factors body.
    public init(factors: [FactorBody], recoveryCodesLeft: Int) {
        self.factors = factors
        self.recoveryCodesLeft = recoveryCodesLeft
    }
}

/// The answer of `POST /v1/users/me/factors/{id}/verify`.
public struct FactorVerificationBody: Codable, Sendable, Equatable {
    /// The factor, now active.
    public var factor: FactorBody
    /// Only when it is the person's first active factor: ten recovery codes, each single use, in
    /// any order. Shown this once; the server keeps only their hashes.
    public var recoveryCodes: [String]?

    /// Creates a verification body.
    public init(factor: FactorBody, recoveryCodes: [String]?) {
        self.factor = factor
        self.recoveryCodes = recoveryCodes
    }
}

/// The answer of `POST /v1/users/me/recovery-codes`: new codes replacing the old, shown this once.
public struct RecoveryCodesBody: Codable, Sendable, Equatable {
    /// Ten recovery codes, each single use, in any order.
    public var recoveryCodes: [String]

    /// Creates a recovery-codes body.
    public init(recoveryCodes: [String]) { self.recoveryCodes = recoveryCodes }
}

/// A factor as a challenge names it, to choose from (Firebase's `MultiFactorInfo`).
public struct FactorHintBody: Codable, Sendable, Equatable {
    /// Its id.
    public var id: String
    /// `totp`.
    public var type: String
    /// The person's name for it.
    public var displayName: String?

    /// Creates a hint.
    public init(id: String, type: String, displayName: String?) {
        self.id = id
        self.type = type
        self.displayName = displayName
    }
}

/// A second-factor challenge: inside a `second_factor_required` error, and the answer of
/// `POST /v1/users/me/factors/challenge` (a step-up).
public struct SecondFactorChallengeBody: Codable, Sendable, Equatable {
    /// What `POST /v1/auth/factor` completes with a code; single use.
    public var challenge: String
    /// Seconds it stays usable.
    public var expiresIn: Int
    /// The person's active factors.
    public var factors: [FactorHintBody]

    /// Creates a challenge body.
    public init(challenge: String, expiresIn: Int, factors: [FactorHintBody]) {
        self.challenge = challenge
        self.expiresIn = expiresIn
        self.factors = factors
    }
}

/// `POST /v1/auth/factor`: a challenge and exactly one of a TOTP code or a recovery code.
public struct FactorChallengeResponse: Codable, Sendable, Equatable {
    /// The challenge being answered.
    public var challenge: String
    /// A TOTP code.
    public var code: String?
    /// A recovery code.
    public var recoveryCode: String?

    /// Creates a response to a challenge.
    public init(challenge: String, code: String? = nil, recoveryCode: String? = nil) {
        self.challenge = challenge
        self.code = code
        self.recoveryCode = recoveryCode
    }

    /// The fields, as the server reads them.
    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case challenge
        case code
        case recoveryCode
    }
}
