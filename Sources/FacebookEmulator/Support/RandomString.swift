import Foundation
import LatchkeyCrypto

/// Random identifiers with the look of Facebook's, drawn with the shared `RandomToken`.
enum RandomString {
    /// `count` characters from `[A-Za-z0-9]`.
    static func alphanumeric(_ count: Int) -> String { RandomToken.alphanumeric(count) }

    /// `count` lowercase hex characters.
    static func hex(_ count: Int) -> String { RandomToken.hex(count) }

    /// A Graph user access token: Facebook's start with `EAA`.
    static func accessToken() -> String { "EAA" + alphanumeric(180) }

    /// An OAuth authorization code: Facebook's start with `AQ`.
    static func authorizationCode() -> String { "AQ" + alphanumeric(120) }

    /// An `fbtrace_id`: eleven characters, as in Facebook's envelopes.
    static func traceID() -> String { alphanumeric(11) }
}
