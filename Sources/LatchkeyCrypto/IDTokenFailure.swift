import LatchkeyAPI

/// Why a Limited Login id token was refused, with the error code the server answers and the SDK
/// reports, so both name a failure the same way.
public enum IDTokenFailure: Error, Sendable, Equatable {
    /// Not a compact JWS of JSON objects, or a required claim missing or oversized.
    case malformed(String)
    /// The header broke a `JOSEHeader` rule.
    case header(JOSEHeader.Refusal)
    /// The `kid` is not among Facebook's published keys.
    case unknownKey
    /// The signature does not verify.
    case signature
    /// `iss` is not accepted.
    case issuer
    /// No `aud` entry is an accepted app.
    case audience
    /// `exp` has passed.
    case expired
    /// `iat` is too old or in the future.
    case issuedAt
    /// The nonce claim is neither the nonce sent nor its SHA-256 hex, or one of them is missing.
    case nonceMismatch
    /// The nonce sent is longer than any real one.
    case nonceTooLong

    /// The stable code for this failure.
    public var code: ErrorCode {
        switch self {
        case .malformed, .header, .signature: .idTokenInvalid
        case .unknownKey: .idTokenUnknownKey
        case .issuer: .idTokenWrongIssuer
        case .audience: .idTokenWrongAudience
        case .expired: .idTokenExpired
        case .issuedAt: .idTokenIssuedAtInvalid
        case .nonceMismatch: .nonceMismatch
        case .nonceTooLong: .invalidRequest
        }
    }

    /// A message for the person or developer; it never quotes the token.
    public var message: String {
        switch self {
        case .malformed(let detail): detail
        case .header(let refusal): "The id token was refused: \(refusal.message)."
        case .unknownKey: "The id token is signed with a key Facebook does not publish."
        case .signature: "The id token's signature is invalid."
        case .issuer: "The id token was not issued by an accepted issuer."
        case .audience: "The id token was issued to another app."
        case .expired: "The id token has expired."
        case .issuedAt: "The id token was issued too long ago (or in the future); log in again."
        case .nonceMismatch: "The id token's nonce does not match the nonce sent with it."
        case .nonceTooLong: "nonce is too long"
        }
    }
}
