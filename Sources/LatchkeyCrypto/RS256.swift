import Crypto
import Foundation
import _CryptoExtras

/// RSASSA-PKCS1-v1_5 with SHA-256, the `RS256` of JWS (RFC 7518 §3.3) that Facebook signs Limited
/// Login id tokens with.
public enum RS256 {
    /// Whether `signature` is the key's RS256 signature of `input`.
    ///
    /// The signature must be exactly as long as the modulus: BoringSSL refuses other lengths, and
    /// checking first keeps a padded or truncated copy of a real signature from being a second
    /// valid spelling of the same token.
    public static func isValid(_ signature: Data, for input: Data, key: _RSA.Signing.PublicKey) -> Bool {
        guard signature.count * 8 == key.keySizeInBits else { return false }
        return key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: input),
            padding: .insecurePKCS1v1_5)
    }

    /// The key's RS256 signature of `input`: the emulator signs id tokens with it.
    public static func sign(_ input: some DataProtocol, key: _RSA.Signing.PrivateKey) throws -> Data {
        try key.signature(for: SHA256.hash(data: Data(input)), padding: .insecurePKCS1v1_5).rawRepresentation
    }
}
