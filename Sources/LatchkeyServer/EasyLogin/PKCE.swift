import Crypto
import Foundation
import LatchkeyAPI

/// RFC 7636 helpers. Only S256: `plain` would hand the verifier to anyone who sees the dialog URL.
enum PKCE {
    /// `BASE64URL(SHA256(verifier))`.
    static func challenge(for verifier: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8))))
    }

    /// A verifier: 43–128 characters of `[A-Za-z0-9-._~]` (§4.1).
    static func isValidVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count) && verifier.utf8.allSatisfy(isUnreserved)
    }

    /// An S256 challenge is a SHA-256 in base64url without padding: exactly 43 characters.
    static func isValidS256Challenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43
            && challenge.utf8.allSatisfy { isUnreserved($0) && $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "~") }
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
