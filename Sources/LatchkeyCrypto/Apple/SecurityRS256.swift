// RS256 through Apple's Security framework, so an app using the SDK links no BoringSSL
// (`RSAPublicKey`). Compiled on Apple platforms, and on Linux only by the target
// LatchkeyAppleAdapterCheck, against the Security stand-in (a link to this folder), so a change
// that breaks it fails on every build.
#if canImport(Darwin) || LATCHKEY_APPLE_STAND_INS
import Foundation
import Security

/// RSASSA-PKCS1-v1_5 with SHA-256 by `SecKeyVerifySignature`.
enum SecurityRS256 {
    /// Whether Security reads `publicKey` (PKCS #1 `RSAPublicKey` DER) as an RSA public key.
    static func accepts(publicKey: Data) -> Bool {
        key(publicKey) != nil
    }

    /// Whether `signature` is the RS256 signature of `input` by the key `publicKey` (PKCS #1
    /// `RSAPublicKey` DER). A key Security cannot read verifies nothing.
    static func isValid(_ signature: Data, for input: Data, publicKey: Data) -> Bool {
        // A SecKey is made per check rather than kept: it is not Sendable, and this runs once per
        // sign-in on a device (the server, on Linux, does not come here).
        guard let key = key(publicKey) else { return false }
        return SecKeyVerifySignature(
            key, .rsaSignatureMessagePKCS1v15SHA256, input as CFData, signature as CFData, nil)
    }

    /// The RSA public key `publicKey` holds, if Security reads it.
    private static func key(_ publicKey: Data) -> SecKey? {
        let attributes: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecAttrKeyClass as String: kSecAttrKeyClassPublic,
        ]
        return SecKeyCreateWithData(publicKey as CFData, attributes as CFDictionary, nil)
    }
}
#endif
