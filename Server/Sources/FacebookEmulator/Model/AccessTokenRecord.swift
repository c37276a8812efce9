import Foundation
import LatchkeyAPI

/// An access token the emulator issued, and everything `debug_token` reports about it.
struct AccessTokenRecord: Sendable {
    enum Kind: String, Sendable {
        case user = "USER"
        case app = "APP"
    }

    let token: String
    let kind: Kind
    let appID: String
    /// The person's key for user tokens.
    let personKey: String?
    let issuedAt: Date
    /// `nil` never expires (app tokens).
    var expiresAt: Date?
    var dataAccessExpiresAt: Date?
    /// Set once the token is revoked; expiry is computed from the clock instead.
    var invalidation: TokenInvalidation?
    /// `auth_type` of the dialog that issued the token, reported in `debug_token` metadata.
    var authType: String?
    /// Whether this token's errors carry a subcode. Facebook's error-handling guide allows its
    /// absence ("If no subcode is present, the login status or access token has expired, been
    /// revoked, or is otherwise invalid"), and captured 190 errors come both ways; tests choose.
    var sendsSubcode = true
    /// The permissions granted when the person removed the app: `debug_token` keeps reporting them
    /// in `granular_scopes` while `scopes` turns empty.
    var grantedAtRemoval: Set<String>?
}

/// Why a token no longer works, with the Graph subcode and message Facebook uses (§6.3).
public enum TokenInvalidation: String, Sendable, Codable, CaseIterable {
    /// The user changed their password: 190/460.
    case passwordChanged = "password_changed"
    /// The user logged out: 190/467.
    case loggedOut = "logged_out"
    /// The user removed the app: 190/458.
    case appRemoved = "app_removed"
    /// Invalidated through an API call: 190/466.
    case invalidated

    var subcode: Int {
        switch self {
        case .passwordChanged: 460
        case .loggedOut: 467
        case .appRemoved: 458
        case .invalidated: 466
        }
    }

    func message(appID: String) -> String {
        switch self {
        case .passwordChanged:
            "Error validating access token: The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons."
        case .loggedOut:
            "Error validating access token: This may be because the user logged out or may be due to a system error."
        case .appRemoved:
            "Error validating access token: The user has not authorized application \(appID)."
        case .invalidated:
            "Error validating access token: The session was invalidated explicitly using an API call."
        }
    }
}
