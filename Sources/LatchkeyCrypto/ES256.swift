import Crypto
import Foundation

/// ECDSA P-256 with SHA-256, the `ES256` of JWS (RFC 7518 §3.4) that Latchkey signs its access
/// tokens with, in the one encoding each signature is allowed (`P256LowS`).
public enum ES256 {
    /// The key's signature of `input` as raw `r || s`, in its low-S form: the signer may produce
    /// either S or n − S, and `isValid` accepts only the low one.
    public static func sign(_ input: Data, key: P256.Signing.PrivateKey) throws -> Data {
        P256LowS.normalized(try key.signature(for: input).rawRepresentation)
    }

    /// Whether `signature` (64 bytes, `r || s`, low S) is the key's signature of `input`. A high-S
    /// signature is refused even though it verifies mathematically, so each token has exactly one
    /// valid encoding.
    public static func isValid(_ signature: Data, for input: Data, key: P256.Signing.PublicKey) -> Bool {
        guard P256LowS.isLowS(signature),
            let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return key.isValidSignature(parsed, for: input)
    }
}
