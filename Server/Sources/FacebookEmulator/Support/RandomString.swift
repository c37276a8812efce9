import Foundation
import LatchkeyCrypto

/// Facebook-shaped identifiers (tokens, codes, trace ids), drawn with the shared `RandomToken`.
enum RandomString {
    /// A Graph user access token: Facebook's start with `EAA`.
    static func accessToken() -> String { "EAA" + RandomToken.alphanumeric(180) }

    /// An OAuth authorization code: Facebook's start with `AQ`.
    static func authorizationCode() -> String { "AQ" + RandomToken.alphanumeric(120) }

    /// An `fbtrace_id`: eleven characters, as in Facebook's envelopes.
    static func traceID() -> String { RandomToken.alphanumeric(11) }
}

extension RandomString {
    /// An Apple authorization code, refresh or access token: a one-letter kind (`c`, `r`, `a`),
    /// 32 hex, then `.0.` and a short and a long tail, as Apple's opaque values look.
    static func appleToken(kind: Character) -> String {
        "\(kind)" + RandomToken.hex(32) + ".0." + RandomToken.string(count: 4, alphabet: "abcdefghijklmnopqrstuvwxyz")
            + "." + RandomToken.alphanumeric(22)
    }
}
