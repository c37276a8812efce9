/// Ways the control API can break an Apple identity token, one per check a Sign in with Apple
/// verifier must make ("Verifying a user").
enum AppleIDTokenDefect: String, Sendable, CaseIterable {
    /// Signed by an RSA key Apple does not publish, under the current key's `kid`.
    case wrongKey = "wrong_key"
    /// `kid` names no published key.
    case unknownKid = "unknown_kid"
    /// `exp` is in the past.
    case expired
    /// `aud` is a client id the team never registered.
    case wrongAudience = "wrong_audience"
    /// `iss` is not Apple.
    case wrongIssuer = "wrong_issuer"
    /// No `nonce` claim, with `nonce_supported: false`: the platform could not carry one.
    case noNonceSupportedFalse = "no_nonce_supported_false"
    /// A valid signature with one bit flipped.
    case badSignature = "bad_signature"
}
