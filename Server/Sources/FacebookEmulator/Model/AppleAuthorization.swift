import Foundation

/// A person's standing authorization of the team's apps: what Apple remembers after the consent
/// sheet, and why the name and email are shared only once (the sheet is not shown again while
/// it lasts).
struct AppleConsent: Sendable {
    /// Distinguishes this authorization from an earlier, ended one, so a code issued under an
    /// ended authorization is refused even if the person has authorized again since.
    let id: Int
    /// `name` and `email`, as granted so far.
    var scopes: Set<String>
    /// The person chose Hide My Email, so the relay address is shared instead of the real one.
    let hidesEmail: Bool
}

/// How an id token's claims are written, chosen at authorization and kept for the tokens the
/// code and its refresh token later produce, so a backend sees one consistent shape per sign-in.
struct AppleTokenShape: Sendable {
    /// `iss`: `https://appleid.apple.com`, or the `https://account.apple.com` Apple also sent.
    var issuer: String
    /// `email_verified` and `is_private_email` as the strings `"true"`/`"false"` rather than booleans.
    var stringBooleans: Bool
    /// Leaves `email` (and its two flags) out even when the email scope was granted, as some
    /// captured native tokens do.
    var omitsEmail: Bool
}

/// An authorization code from the device: single use, five minutes, bound to its client id.
struct AppleCode: Sendable {
    let code: String
    let clientID: String
    let personKey: String
    /// The consent it was issued under (`AppleConsent.id`).
    let consentID: Int
    /// The web flow's `redirect_uri`, which the exchange must repeat; `nil` for the native flow.
    let redirectURI: String?
    let nonce: String?
    let shape: AppleTokenShape
    let issuedAt: Date
    var used: Bool
}

/// A refresh or access token from `/auth/token`.
struct AppleToken: Sendable {
    enum Kind: String, Sendable {
        case refresh = "refresh_token"
        case access = "access_token"
    }

    let token: String
    let kind: Kind
    let clientID: String
    let personKey: String
    let issuedAt: Date
    /// Access tokens last an hour; refresh tokens until revoked.
    let expiresAt: Date?
    let shape: AppleTokenShape
    /// When the person authorized, the id tokens' `auth_time`.
    let authTime: Date
    var revokedAt: Date?
    /// What revoked it: `revoke` (the `/auth/revoke` call that presented it), `authorization_ended`
    /// (another token's revocation ended the authorization), `notification` (consent revoked or
    /// account deleted), `control` (`/_emulator/apple/tokens/revoke`).
    var revokedBy: String?

    func isLive(at now: Date) -> Bool { revokedAt == nil && expiresAt.map { now < $0 } != false }
}
