import Crypto
import Foundation
import LatchkeyShared

/// The one AEAD format of values the server hands out and must get back unaltered without
/// storing them (Easy Login states, link tickets, link requests, link codes):
/// `base64url(kind ‖ key id ‖ AES-256-GCM nonce ‖ ciphertext ‖ tag)`, kind and key id authenticated
/// as associated data. The key id names a key of the session key ring (its first 8 thumbprint
/// bytes), so any node opens what another sealed; each use derives its own key from it.
enum Sealing {
    /// Seals `plain` under the key `keyPath` picks from `signing`, marked `kind`.
    /// - Throws: only if AES-GCM itself fails.
    static func seal(
        _ plain: Data, kind: UInt8, key signing: SessionSigningKey,
        using keyPath: KeyPath<SessionSigningKey, SymmetricKey>
    ) throws -> String {
        let header = Data([kind]) + signing.requestKeyID
        let box = try AES.GCM.seal(plain, using: signing[keyPath: keyPath], authenticating: header)
        guard let combined = box.combined else { throw SealedRequestError.sealingFailed }
        return Base64URL.encode(header + combined)
    }

    /// What `text` sealed, and SHA-256 of its bytes (what records a single use: the bytes, not
    /// the text, so another spelling of them, base64url's spare bits or padding, is the same use);
    /// `nil` unless it is a value of `kind` this deployment sealed, unaltered, at most `maximumLength`.
    static func open(
        _ text: String, kind: UInt8, maximumLength: Int, keys: [Data: SessionSigningKey],
        using keyPath: KeyPath<SessionSigningKey, SymmetricKey>
    ) -> (plain: Data, useKey: String)? {
        guard text.utf8.count <= maximumLength, let bytes = Base64URL.decode(text), bytes.count > 1 + 8 + 12 + 16,
            bytes.first == kind, let key = keys[Data(bytes.dropFirst().prefix(8))],
            let box = try? AES.GCM.SealedBox(combined: Data(bytes.dropFirst(9))),
            let plain = try? AES.GCM.open(box, using: key[keyPath: keyPath], authenticating: Data(bytes.prefix(9)))
        else { return nil }
        return (plain, Base64URL.encode(Data(SHA256.hash(data: bytes))))
    }
}

/// A sealing failure: AES-GCM gave no combined form (it always does with its own 12-byte nonce).
enum SealedRequestError: Error {
    case sealingFailed
}
