import Crypto
import Foundation
import LatchkeyAPI

/// Proof Key for Code Exchange (RFC 7636) as Facebook's dialog accepts it: `S256` and `plain`.
enum PKCE {
    enum Method: String, Sendable {
        case s256 = "S256"
        case plain
    }

    /// RFC 7636 §4.1: 43 to 128 characters of `[A-Za-z0-9-._~]`.
    static func isWellFormed(_ value: String) -> Bool {
        (43...128).contains(value.count)
            && value.unicodeScalars.allSatisfy { scalar in
                CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII || "-._~".unicodeScalars.contains(scalar)
            }
    }

    /// Whether `verifier` answers `challenge` under `method`, compared in constant time.
    static func verify(verifier: String, challenge: String, method: Method) -> Bool {
        switch method {
        case .plain:
            return ConstantTime.equals(verifier, challenge)
        case .s256:
            let digest = SHA256.hash(data: Data(verifier.utf8))
            return ConstantTime.equals(Base64URL.encode(Data(digest)), challenge)
        }
    }
}
