import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// The key-encryption key (KEK) under which session signing keys are stored (AES-256-GCM), so a
/// copy of the database alone cannot forge sessions. It lives outside the database: a file
/// (`LATCHKEY_KEY_ENCRYPTION_KEY_FILE`) or the environment.
package struct KeyEncryptionKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let key: SymmetricKey
    /// A short public fingerprint (8 bytes), stored beside each wrapped key so the server can
    /// say which KEK a key needs; derived one-way, it reveals nothing of the key.
    let fingerprint: Data

    /// The fingerprint in hex, as messages name the key.
    package var id: String { Hex.encode(fingerprint) }

    /// Its fingerprint only.
    package var description: String { "KeyEncryptionKey(id: \(id))" }
    /// The same as `description`.
    package var debugDescription: String { description }
    /// The fingerprint only: the key never appears in a dump.
    package var customMirror: Mirror { Mirror(self, children: ["id": id]) }

    /// Wraps 32 key bytes.
    init(bytes: Data) {
        key = SymmetricKey(data: bytes)
        fingerprint = Data(SHA256.hash(data: Data("latchkey key-encryption-key id".utf8) + bytes)).prefix(8)
    }

    /// Parses 32 bytes written as base64 (standard or URL-safe, padded or not) or as 64 hex digits,
    /// surrounding white space ignored.
    /// - Parameter setting: the setting's name, for the error (the value itself is never echoed).
    /// - Throws: `ConfigurationError` when the text is not 32 bytes in one of those forms.
    package init(encoded: String, setting: String = "LATCHKEY_KEY_ENCRYPTION_KEY") throws {
        let text = encoded.trimmingCharacters(in: .whitespacesAndNewlines)
        let bytes: Data? =
            if text.utf8.count == 64, let hex = Self.hexBytes(text) {
                hex
            } else {
                Base64URL.decode(
                    text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                        .replacingOccurrences(of: "=", with: ""))
            }
        guard let bytes, bytes.count == 32 else {
            throw ConfigurationError(
                "\(setting) must be 32 random bytes in base64 or hex; create one with `latchkey keys generate-kek --output FILE`"
            )
        }
        self.init(bytes: bytes)
    }

    /// A new random key and its text form (base64url), for `latchkey keys generate-kek`.
    package static func generate() -> (key: KeyEncryptionKey, encoded: String) {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        return (KeyEncryptionKey(bytes: bytes), Base64URL.encode(bytes))
    }

    /// Hex digits as bytes, `nil` for anything else.
    private static func hexBytes(_ text: String) -> Data? {
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        let digits = Array(text.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes = Data(capacity: digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
