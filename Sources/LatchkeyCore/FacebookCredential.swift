/// A Facebook credential to exchange for a Latchkey session (Firebase's `FacebookAuthProvider.credential`).
public struct FacebookCredential: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case accessToken(String)
        case limitedLogin(idToken: String, rawNonce: String?)
    }

    let kind: Kind

    /// A classic login's access token (`AccessToken.current.tokenString`).
    public static func accessToken(_ token: String) -> FacebookCredential {
        FacebookCredential(kind: .accessToken(token))
    }

    /// A Limited Login id token (`AuthenticationToken.current.tokenString`) and the raw nonce whose
    /// value or SHA-256 was given to Facebook.
    public static func limitedLogin(idToken: String, rawNonce: String?) -> FacebookCredential {
        FacebookCredential(kind: .limitedLogin(idToken: idToken, rawNonce: rawNonce))
    }
}
