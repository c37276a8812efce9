import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// A short JSON payload sealed under the session keys' `ticketKey`, for values the server hands
/// out and must get back unaltered without storing them: link tickets and Easy Login link
/// requests. `base64url(kind ‖ key id ‖ AES-256-GCM nonce ‖ ciphertext ‖ tag)`, kind and key id
/// authenticated as associated data, so a value of one kind never opens as another. Sealed rather
/// than signed, so that what a ticket binds (user ids, the identity) is not readable by whoever
/// holds it. Every node holds the key ring and opens what another sealed.
enum SealedToken {
    /// What a sealed value is for: its first byte.
    enum Kind: UInt8 {
        case linkTicket = 0x4C  // "L"
        case linkRequest = 0x52  // "R"
        /// The authorization code of an Easy Login link: what to link, written only when the app
        /// redeems it with the PKCE verifier.
        case linkCode = 0x43  // "C"

        /// The longest value of this kind accepted, characters: a link code carries the mapped
        /// profile.
        var maximumLength: Int { self == .linkCode ? 8192 : SealedToken.maximumLength }
    }

    /// The longest ticket or link request accepted, characters.
    static let maximumLength = 2048

    /// Seals `payload` under `key`.
    static func seal(_ payload: JSONValue, kind: Kind, key: SessionSigningKey) throws -> String {
        let header = Data([kind.rawValue]) + key.requestKeyID
        let box = try AES.GCM.seal(payload.encoded(), using: key.ticketKey, authenticating: header)
        guard let combined = box.combined else { throw SealedRequestError.sealingFailed }
        return Base64URL.encode(header + combined)
    }

    /// What a sealed value held, and the SHA-256 of its bytes (what records its single use).
    struct Opened {
        let payload: JSONValue
        let useKey: String
    }

    /// Opens `text` of `kind`; `nil` when it is not one this deployment sealed, or was altered.
    static func open(_ text: String, kind: Kind, keys: [Data: SessionSigningKey]) -> Opened? {
        guard text.utf8.count <= kind.maximumLength, let bytes = Base64URL.decode(text), bytes.count > 1 + 8 + 12 + 16,
            bytes.first == kind.rawValue, let key = keys[Data(bytes.dropFirst().prefix(8))]
        else { return nil }
        guard let box = try? AES.GCM.SealedBox(combined: Data(bytes.dropFirst(9))),
            let plain = try? AES.GCM.open(box, using: key.ticketKey, authenticating: Data(bytes.prefix(9))),
            let payload = try? JSONValue.decode(plain), payload.isObject
        else { return nil }
        return Opened(payload: payload, useKey: Base64URL.encode(Data(SHA256.hash(data: bytes))))
    }
}
