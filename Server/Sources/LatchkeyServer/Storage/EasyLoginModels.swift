import Foundation

/// An Easy Login request waiting for Facebook's answer, stored under the SHA-256 of the state
/// value sent to Facebook, so the database never holds a value that could complete the flow.
package struct PendingAuthorization: Codable, Sendable, Equatable {
    /// SHA-256 of the `state` sent to Facebook (the storage key).
    package var handleHash: Data
    /// The OAuth client that asked.
    package var clientID: String
    /// Where the answer goes, exactly as the client sent it.
    package var redirectURI: String
    /// The client's own `state`, echoed back untouched.
    package var clientState: String?
    /// The client's S256 PKCE challenge.
    package var codeChallenge: String
    /// Facebook permissions to ask for.
    package var permissions: [String]
    /// The requested field mapping (already validated); `nil` for the server's default.
    package var fieldsMapping: [String: String]?
    /// The Facebook app the dialog was opened for.
    package var facebookAppID: String
    /// Our PKCE verifier towards Facebook.
    package var facebookCodeVerifier: String
    /// When the person must be back from Facebook.
    package var expiresAt: Date

    /// Creates a pending request.
    package init(
        handleHash: Data, clientID: String, redirectURI: String, clientState: String?, codeChallenge: String,
        permissions: [String], fieldsMapping: [String: String]?, facebookAppID: String, facebookCodeVerifier: String,
        expiresAt: Date
    ) {
        self.handleHash = handleHash
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.clientState = clientState
        self.codeChallenge = codeChallenge
        self.permissions = permissions
        self.fieldsMapping = fieldsMapping
        self.facebookAppID = facebookAppID
        self.facebookCodeVerifier = facebookCodeVerifier
        self.expiresAt = expiresAt
    }
}

/// An authorization code to store with a sign-in: bound to its client, redirect URI and PKCE
/// challenge, and to the session id it will open, so a replay can revoke exactly that session.
package struct NewAuthorizationCode: Sendable, Equatable {
    /// SHA-256 of the code (the code itself is never stored).
    package var hash: Data
    /// The client it was issued to.
    package var clientID: String
    /// The redirect URI it was delivered to.
    package var redirectURI: String
    /// The client's S256 challenge.
    package var codeChallenge: String
    /// The session redeeming it will open.
    package var sessionID: String
    /// Granted Facebook permissions, reported as the token answer's `scope`.
    package var scope: [String]
    /// Expiry.
    package var expiresAt: Date
    /// The second factor proven before it was issued: the session it opens keeps it.
    package var secondFactor: SecondFactorKind?

    /// Creates a code record.
    package init(
        hash: Data, clientID: String, redirectURI: String, codeChallenge: String, sessionID: String, scope: [String],
        expiresAt: Date, secondFactor: SecondFactorKind? = nil
    ) {
        self.secondFactor = secondFactor
        self.hash = hash
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.sessionID = sessionID
        self.scope = scope
        self.expiresAt = expiresAt
    }
}

/// What a token request presents with an authorization code; compared with the code's bindings
/// inside the redemption transaction.
package struct CodePresentation: Sendable, Equatable {
    /// SHA-256 of the presented code.
    package var hash: Data
    /// `client_id`.
    package var clientID: String
    /// `redirect_uri`.
    package var redirectURI: String
    /// S256 of the presented `code_verifier`.
    package var codeChallenge: String

    /// Creates a presentation.
    package init(hash: Data, clientID: String, redirectURI: String, codeChallenge: String) {
        self.hash = hash
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
    }
}

/// The outcome of redeeming an authorization code.
package enum CodeRedemption: Sendable, Equatable {
    /// The session is open, with the refresh token the caller passed, and the second factor
    /// proven before the code was issued.
    case issued(sessionID: String, userID: String, scope: [String], secondFactor: SecondFactorKind? = nil)
    /// Unknown, expired, or presented with the wrong client, redirect URI or verifier (the code is
    /// then spent, so it cannot be tried again).
    case invalid
    /// Already redeemed: the session it opened is now revoked (RFC 6749 §4.1.2).
    case reused
    /// The user was disabled meanwhile; nothing was opened.
    case userDisabled
}
