import Crypto
import Foundation
import LatchkeyCrypto

/// Recovery codes: the way in when the authenticator is lost. Ten per user, each single use, in any
/// order, shown once and stored only as hashes.
///
/// A code is 10 characters of Crockford's base32 (50 random bits) in two groups, `7k3qd-x9m2a`:
/// no `i`, `l`, `o` or `u` to misread, and what a person types back is read leniently (any case,
/// spaces or dashes anywhere, `i`/`l` as `1`, `o` as `0`). Fifty bits against at most
/// `LATCHKEY_TOTP_MAX_ATTEMPTS` guesses per challenge, with the per-user wait, is out of reach, so
/// one SHA-256 (keyed by the user, so equal codes of two users differ) stores them well enough.
package enum RecoveryCodes {
    /// How many a user is given.
    package static let count = 10
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// `count` new codes, as shown to the person.
    package static func generate() -> [String] {
        (0..<count).map { _ in
            let characters = RandomToken.string(count: 10, alphabet: String(decoding: alphabet, as: UTF8.self))
            return characters.prefix(5) + "-" + characters.suffix(5)
        }
    }

    /// The canonical 10 characters of what a person typed, or `nil` when it cannot be a code.
    package static func normalize(_ typed: String) -> String? {
        guard typed.utf8.count <= 64 else { return nil }
        var output: [UInt8] = []
        for byte in typed.lowercased().utf8 {
            switch byte {
            case UInt8(ascii: "-"), UInt8(ascii: " "): continue
            case UInt8(ascii: "i"), UInt8(ascii: "l"): output.append(UInt8(ascii: "1"))
            case UInt8(ascii: "o"): output.append(UInt8(ascii: "0"))
            case _ where alphabet.contains(byte): output.append(byte)
            default: return nil
            }
        }
        return output.count == 10 ? String(decoding: output, as: UTF8.self) : nil
    }

    /// What is stored of `code` (shown or typed) for `userID`; `nil` when it cannot be a code.
    package static func hash(_ code: String, userID: String) -> Data? {
        normalize(code).map { Data(SHA256.hash(data: Data("latchkey.recovery-code.v1:\(userID):\($0)".utf8))) }
    }
}
