import Foundation
import LatchkeyAPI

/// Random identifiers with the look of Facebook's, from the system's secure generator.
enum RandomString {
    private static let alphanumerics = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// `count` characters from `[A-Za-z0-9]`.
    static func alphanumeric(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in alphanumerics.randomElement(using: &generator) ?? "A" })
    }

    /// `count` lowercase hex characters.
    static func hex(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in "0123456789abcdef".randomElement(using: &generator) ?? "0" })
    }

    /// A Graph user access token: Facebook's start with `EAA`.
    static func accessToken() -> String { "EAA" + alphanumeric(180) }

    /// An OAuth authorization code: Facebook's start with `AQ`.
    static func authorizationCode() -> String { "AQ" + alphanumeric(120) }

    /// An `fbtrace_id`: eleven characters, as in Facebook's envelopes.
    static func traceID() -> String { alphanumeric(11) }
}
