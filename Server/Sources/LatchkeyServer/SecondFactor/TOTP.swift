import Crypto
import Foundation
import LatchkeyShared

/// Time-based one-time passwords as RFC 6238 defines them, with the parameters every authenticator
/// app assumes when a URI names none: HMAC-SHA-1, 6 digits, 30-second steps from the Unix epoch
/// (RFC 6238 §4; the code itself is RFC 4226 §5.3's dynamic truncation).
package enum TOTP {
    /// Seconds per step (RFC 6238's `X`).
    package static let period: Int64 = 30
    /// Digits per code.
    package static let digits = 6
    /// Bytes of a new secret: 160 bits, the length RFC 4226 §4 recommends for HMAC-SHA-1.
    package static let secretLength = 20

    /// A new secret of `secretLength` bytes from the system's secure generator.
    package static func newSecret() -> Data {
        SymmetricKey(size: SymmetricKeySize(bitCount: secretLength * 8)).withUnsafeBytes { Data($0) }
    }

    /// The step `date` falls in (RFC 6238's `T`).
    package static func step(at date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / Double(period)).rounded(.down))
    }

    /// The code of `step` for `secret`, zero-padded to `digits`.
    package static func code(secret: Data, step: Int64, digits: Int = TOTP.digits) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        // RFC 4226 §5.3: four bytes at the offset the last nibble names, the top bit dropped.
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary =
            (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The step within `skew` steps of `date` whose code is `code`, or `nil`.
    ///
    /// Every candidate is computed and compared in constant time, whichever matches: how long a
    /// check takes tells nothing about which step (or whether any) matched.
    package static func matchingStep(_ code: String, secret: Data, at date: Date, skew: Int) -> Int64? {
        guard code.utf8.count == digits, code.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        let current = step(at: date)
        var found: Int64?
        for offset in -Int64(skew)...Int64(skew) {
            let candidate = current + offset
            if ConstantTime.equals(Self.code(secret: secret, step: candidate), code) {
                found = candidate
            }
        }
        return found
    }

    /// The `otpauth://totp/` URI an authenticator app scans (Google Authenticator's Key Uri
    /// Format, which every app reads): the label `issuer:account`, the secret in unpadded base32,
    /// and the parameters spelled out.
    package static func uri(secret: Data, issuer: String, account: String) -> String {
        func escaped(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? ""
        }
        return "otpauth://totp/\(escaped(issuer)):\(escaped(account))?secret=\(Base32.encode(secret))"
            + "&issuer=\(escaped(issuer))&algorithm=SHA1&digits=\(digits)&period=\(period)"
    }

    /// RFC 3986's unreserved characters: everything else in a label or parameter is escaped.
    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
