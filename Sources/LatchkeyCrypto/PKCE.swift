import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// Proof Key for Code Exchange (RFC 7636), for every party that speaks it: the SDK makes
/// verifiers and challenges, the server checks both ends of Easy Login, the emulator checks
/// Facebook's dialog and token endpoint.
public enum PKCE {
    /// `code_challenge_method`. Latchkey's own endpoints accept only S256 (`plain` hands the
    /// verifier to anyone who sees the authorization URL); Facebook's dialog accepts both.
    public enum Method: String, Sendable {
        /// `BASE64URL(SHA256(verifier))`.
        case s256 = "S256"
        /// The verifier itself.
        case plain
    }

    /// A fresh verifier: 64 random bytes as base64url, 86 characters (RFC 7636 §4.1 recommends
    /// 32 or more bytes of entropy; the length stays inside 43–128).
    public static func makeVerifier() -> String { RandomToken.base64URL(bytes: 64) }

    /// `BASE64URL(SHA256(verifier))`, the S256 challenge (RFC 7636 §4.2).
    public static func challenge(for verifier: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8))))
    }

    /// 43–128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1): the form of every verifier, and of
    /// any challenge Facebook's dialog accepts.
    public static func isWellFormed(_ value: String) -> Bool {
        (43...128).contains(value.utf8.count) && value.utf8.allSatisfy(isUnreserved)
    }

    /// An S256 challenge is a SHA-256 in base64url without padding: exactly 43 characters.
    public static func isValidS256Challenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43
            && challenge.utf8.allSatisfy { isUnreserved($0) && $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "~") }
    }

    /// Whether `verifier` answers `challenge` under `method`, compared in constant time.
    public static func verify(verifier: String, challenge: String, method: Method) -> Bool {
        switch method {
        case .plain: ConstantTime.equals(verifier, challenge)
        case .s256: ConstantTime.equals(Self.challenge(for: verifier), challenge)
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
