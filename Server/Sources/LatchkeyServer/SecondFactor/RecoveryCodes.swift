import Crypto
import Foundation
import LatchkeyCrypto

/// Recovery codes: the way in when the authenticator is lost. Ten per user, each single use, in any
/// order, shown once and stored only as hashes.
///
/// A code is 10 characters of Crockford's base32 (50 random bits) in two groups, `7k3qd-x9m2a`:
/// no `i`, `l`, `o` or `u` to misread, and what a person types back is read leniently (any case,
/// spaces or dashes anywhere, `i`/`l` as `1`, `o` as `0`). Online, fifty bits against at most
/// `LATCHKEY_TOTP_MAX_ATTEMPTS` guesses per challenge, with the per-user wait, is out of reach.
/// Offline, from a copy of the database, a fast hash of fifty bits would fall to a GPU in hours, so
/// codes are stored as PBKDF2-HMAC-SHA-256 (`iterations` rounds, salted with the user id so equal
/// codes of two users differ): about 2·10¹⁸ HMACs for one code of one person, years of a GPU.
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

    /// PBKDF2 rounds per code: a few milliseconds of one core (a sign-in with a recovery code costs
    /// one hash, a first enrolment ten), spent on the server's shared threads, so kept modest.
    package static let iterations = 2_000

    /// What is stored of `code` (shown or typed) for `userID`; `nil` when it cannot be a code.
    package static func hash(_ code: String, userID: String) -> Data? {
        normalize(code).map {
            pbkdf2(password: Data($0.utf8), salt: Data("latchkey.recovery-code.v1:\(userID)".utf8))
        }
    }

    /// PBKDF2-HMAC-SHA-256 (RFC 8018 §5.2) of one 32-byte block: all a hash that is only compared needs.
    static func pbkdf2(password: Data, salt: Data, iterations: Int = RecoveryCodes.iterations) -> Data {
        let key = SymmetricKey(data: password)
        var block = [UInt8](HMAC<SHA256>.authenticationCode(for: salt + [0, 0, 0, 1], using: key))
        var result = block
        for _ in 1..<iterations {
            block = [UInt8](HMAC<SHA256>.authenticationCode(for: block, using: key))
            for index in 0..<block.count { result[index] ^= block[index] }
        }
        return Data(result)
    }
}
