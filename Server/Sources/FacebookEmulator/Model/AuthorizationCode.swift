import Foundation
import LatchkeyAPI
import LatchkeyCrypto

/// A code the dialog issued: single use, bound to its app, redirect URI and PKCE challenge.
struct AuthorizationCode: Sendable {
    let code: String
    let appID: String
    let personKey: String
    let redirectURI: String
    let challenge: String?
    let challengeMethod: PKCE.Method?
    /// The dialog's `nonce`, copied verbatim into the id token.
    let nonce: String?
    /// Whether `openid` was requested, which makes the exchange return an `id_token`.
    let openID: Bool
    let authType: String?
    let issuedAt: Date
    var used: Bool
}
