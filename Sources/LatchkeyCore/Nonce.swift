import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

/// A login nonce: a cryptographically random raw value for Latchkey and its SHA-256 hex for
/// Facebook's `LoginConfiguration`, the pattern every seed document writes by hand.
///
/// Pass `sha256` to Facebook and `raw` to `FacebookCredential.limitedLogin(idToken:rawNonce:)`;
/// the server accepts an id token whose `nonce` claim is either.
public struct Nonce: Sendable, Equatable {
    /// The secret value kept by the app.
    public let raw: String
    /// Lowercase hex SHA-256 of `raw`.
    public var sha256: String { Hex.encode(SHA256.hash(data: Data(raw.utf8))) }

    /// A fresh nonce of `length` characters from `[0-9A-Za-z-._]`; shorter lengths are raised to 16
    /// so a nonce always carries enough entropy.
    public init(length: Int = 32) {
        raw = RandomToken.string(count: max(length, 16), alphabet: RandomToken.alphanumerics + "-._")
    }

    /// Wraps a nonce received from elsewhere (e.g. `POST /v1/auth/nonce`).
    public init(raw: String) { self.raw = raw }
}
