/// The JSON body of every error: `{"error": {"code": "...", "message": "..."}}`.
public struct ErrorBody: Codable, Sendable, Equatable {
    /// The error itself.
    public struct Detail: Codable, Sendable, Equatable {
        /// Stable, machine-readable code.
        public var code: ErrorCode
        /// Human-readable explanation, safe to show to developers; never contains secrets.
        public var message: String
        /// Only with `identity_already_linked`: the ticket that merges the account owning the
        /// identity with the caller's (`POST /v1/users/me/identities/complete`). Absent otherwise.
        public var linkTicket: String?
        /// Only with `second_factor_required`: the challenge a code completes
        /// (`POST /v1/auth/factor`). Absent otherwise.
        public var challenge: String?
        /// Only with `second_factor_required`: seconds the challenge stays usable.
        public var expiresIn: Int?
        /// Only with `second_factor_required`: the person's factors, to choose from and name.
        public var factors: [FactorHintBody]?
        /// Creates a detail.
        public init(
            code: ErrorCode, message: String, linkTicket: String? = nil, challenge: SecondFactorChallengeBody? = nil
        ) {
            self.code = code
            self.message = message
            self.linkTicket = linkTicket
            self.challenge = challenge?.challenge
            self.expiresIn = challenge?.expiresIn
            self.factors = challenge?.factors
        }

        /// The challenge of a `second_factor_required`, when this is one.
        public var secondFactorChallenge: SecondFactorChallengeBody? {
            guard let challenge, let expiresIn else { return nil }
            return SecondFactorChallengeBody(challenge: challenge, expiresIn: expiresIn, factors: factors ?? [])
        }
    }

    /// The error.
    public var error: Detail

    /// Creates an error body.
    public init(
        code: ErrorCode, message: String, linkTicket: String? = nil, challenge: SecondFactorChallengeBody? = nil
    ) {
        self.error = Detail(code: code, message: message, linkTicket: linkTicket, challenge: challenge)
    }
}

/// The token endpoint's error body, shaped as RFC 6749 §5.2 so any OAuth client library reads it:
/// `{"error": "invalid_grant", "error_description": "...", "error_code": "refresh_token_reused"}`.
/// `error_code` keeps Latchkey's finer, stable code alongside the standard one.
public struct OAuthErrorBody: Codable, Sendable, Equatable {
    /// The RFC 6749 code: `invalid_request`, `invalid_client`, `invalid_grant`, `unsupported_grant_type`, ….
    public var error: String
    /// Human-readable explanation; never contains secrets.
    public var errorDescription: String
    /// Latchkey's stable code (one of `ErrorCode`).
    public var errorCode: ErrorCode
    /// With `identity_already_linked` (an Easy Login link's code redeemed): the link ticket.
    public var linkTicket: String?

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
        case errorCode = "error_code"
        case linkTicket = "link_ticket"
    }

    /// Creates an OAuth error body.
    public init(error: String, errorDescription: String, errorCode: ErrorCode, linkTicket: String? = nil) {
        self.error = error
        self.errorDescription = errorDescription
        self.errorCode = errorCode
        self.linkTicket = linkTicket
    }
}
