import Foundation

/// RSASSA-PKCS1-v1_5 with SHA-256, the `RS256` of JWS (RFC 7518 §3.3) that Facebook signs Limited
/// Login id tokens with.
public enum RS256 {
    /// Whether `signature` is the key's RS256 signature of `input`.
    ///
    /// The signature must be exactly as long as the modulus: BoringSSL refuses other lengths, and
    /// checking first keeps a padded or truncated copy of a real signature from being a second
    /// valid spelling of the same token (on every platform, whichever library checks).
    public static func isValid(_ signature: Data, for input: Data, key: RSAPublicKey) -> Bool {
        guard signature.count == key.signatureLength else { return false }
        return key.isValidRS256(signature, for: input)
    }
}
