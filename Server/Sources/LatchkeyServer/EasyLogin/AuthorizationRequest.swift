import Foundation

/// An app's Easy Login request while the person is on Facebook's dialog: what the callback needs
/// to finish it. It travels sealed in the `state` sent to Facebook (`SealedRequest`), so nothing is
/// stored before the person comes back.
struct AuthorizationRequest: Sendable, Equatable {
    /// The OAuth client that asked.
    var clientID: String
    /// Where the answer goes, exactly as the client sent it.
    var redirectURI: String
    /// The client's own `state`, echoed back untouched.
    var clientState: String?
    /// The client's S256 PKCE challenge.
    var codeChallenge: String
    /// The requested field mapping (already validated); `nil` for the server's default.
    var fieldsMapping: [String: String]?
    /// The Facebook app the dialog was opened for.
    var facebookAppID: String
    /// Our PKCE verifier towards Facebook: secret, which is why the request is sealed, not signed.
    var facebookCodeVerifier: String
    /// When the person must be back from Facebook.
    var expiresAt: Date
    /// A sealed link request (`POST /v1/users/me/identities/link-requests`): the callback links the
    /// identity to that request's user instead of signing in.
    var linkRequest: String? = nil
}

extension AuthorizationRequest {
    /// A request an earlier release parked in the database (`pending_authorizations`), met when a
    /// person comes back to a newer node during a rolling upgrade. The permissions are dropped:
    /// Facebook's answer says what was granted.
    init(_ pending: PendingAuthorization) {
        self.init(
            clientID: pending.clientID, redirectURI: pending.redirectURI, clientState: pending.clientState,
            codeChallenge: pending.codeChallenge, fieldsMapping: pending.fieldsMapping,
            facebookAppID: pending.facebookAppID, facebookCodeVerifier: pending.facebookCodeVerifier,
            expiresAt: pending.expiresAt)
    }
}

/// What an opened link request binds (`IdentityService.linkRequest`).
struct LinkRequestClaims: Sendable {
    /// The user the identity joins.
    let userID: String
    /// The session that asked, which must still be active at the callback and at redemption.
    let sessionID: String
    /// The PKCE challenge of the Easy Login request it may ride with.
    let codeChallenge: String
    /// When the request expires.
    let expiresAt: Date
    /// The second factor the asking session proved: the session the link opens keeps it.
    var secondFactor: SecondFactorKind?
}
