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
