import Foundation
import LatchkeyAPI
import LatchkeyShared

/// A short JSON payload sealed (`Sealing`) under the session keys' `ticketKey`: link tickets, Easy
/// Login link requests and link codes, console sessions. The kind byte is authenticated, so a value of one kind never
/// opens as another, and the key is not the Easy Login state's, so neither opens as the other.
/// Sealed rather than signed, so that what a ticket binds (user ids, the identity) is not readable
/// by whoever holds it.
enum SealedToken {
    /// What a sealed value is for: its first byte.
    enum Kind: UInt8 {
        case linkTicket = 0x4C  // "L"
        case linkRequest = 0x52  // "R"
        /// The authorization code of an Easy Login link: what to link, written only when the app
        /// redeems it with the PKCE verifier.
        case linkCode = 0x43  // "C"
        /// A console sign-in (`ConsoleSession`), the `latchkey_console` cookie.
        case consoleSession = 0x41  // "A"

        /// The longest value of this kind accepted, characters: a link code carries the mapped
        /// profile.
        var maximumLength: Int { self == .linkCode ? 8192 : SealedToken.maximumLength }
    }

    /// The longest ticket or link request accepted, characters.
    static let maximumLength = 2048

    /// Seals `payload` under `key` (`Sealing`, with the key's `ticketKey`).
    static func seal(_ payload: JSONValue, kind: Kind, key: SessionSigningKey) throws -> String {
        try Sealing.seal(payload.encoded(), kind: kind.rawValue, key: key, using: \.ticketKey)
    }

    /// What a sealed value held, and what records its single use (`Sealing.open`).
    struct Opened {
        let payload: JSONValue
        let useKey: String
    }

    /// Opens `text` of `kind`; `nil` when it is not one this deployment sealed, or was altered.
    static func open(_ text: String, kind: Kind, keys: [Data: SessionSigningKey]) -> Opened? {
        guard
            let opened = Sealing.open(
                text, kind: kind.rawValue, maximumLength: kind.maximumLength, keys: keys, using: \.ticketKey),
            let payload = try? JSONValue.decode(opened.plain), payload.isObject
        else { return nil }
        return Opened(payload: payload, useKey: opened.useKey)
    }
}
