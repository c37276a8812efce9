import LatchkeyAPI

/// Ways the control API can break an id token, one per check a Limited Login verifier must make.
public enum IDTokenDefect: String, Sendable, Codable, CaseIterable {
    /// `aud` is another app.
    case wrongAudience = "wrong_audience"
    /// `iss` is the legacy `https://facebook.com`.
    case legacyIssuer = "legacy_issuer"
    /// `iss` is not Facebook at all.
    case wrongIssuer = "wrong_issuer"
    /// `exp` is in the past.
    case expired
    /// `iat` is more than ten minutes old while `exp` is still ahead.
    case staleIssuedAt = "stale_iat"
    /// `iat` is in the future.
    case futureIssuedAt = "future_iat"
    /// `kid` names a key the JWKS does not publish.
    case unknownKid = "unknown_kid"
    /// No `kid` in the header.
    case missingKid = "missing_kid"
    /// `alg: none` and no signature.
    case algorithmNone = "alg_none"
    /// `alg: HS256`, keyed with the public key's PEM: the RS256/HS256 confusion attack.
    case algorithmHS256 = "alg_hs256"
    /// A valid RS256 signature with one bit flipped.
    case badSignature = "bad_signature"
    /// No `nonce` claim.
    case missingNonce = "missing_nonce"
    /// No `jti` claim.
    case missingJTI = "missing_jti"
}
