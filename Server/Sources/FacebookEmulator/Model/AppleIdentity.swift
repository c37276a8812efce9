import Crypto
import Foundation
import LatchkeyShared

/// The stable identifiers a person has with one Sign in with Apple team, derived by hashing so
/// that tests and tools can predict them and every restart gives the same ones.
enum AppleIdentity {
    /// Apple's `sub`: `000123.<32 lowercase hex>.0456`. Apple scopes it to the developer team, so
    /// every bundle id and Services id of the team sees the same value.
    static func subject(teamID: String, personKey: String) -> String {
        let digest = Array(SHA256.hash(data: Data("apple-sub:\(teamID):\(personKey)".utf8)))
        let leading = digest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } % 1_000_000
        let trailing = digest[20..<24].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } % 10_000
        return padded(leading, to: 6) + "." + Hex.encode(digest[4..<20]) + "." + padded(trailing, to: 4)
    }

    /// The Hide My Email address Apple's relay gives the person for this team:
    /// ten lowercase letters or digits at `privaterelay.appleid.com`.
    static func relayEmail(teamID: String, personKey: String) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        let digest = SHA256.hash(data: Data("apple-relay:\(teamID):\(personKey)".utf8))
        let local = digest.prefix(10).map { alphabet[Int($0) % alphabet.count] }
        return String(local) + "@privaterelay.appleid.com"
    }

    private static func padded(_ value: UInt32, to width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
