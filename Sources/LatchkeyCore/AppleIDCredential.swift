import Foundation
import LatchkeyAPI

/// What Sign in with Apple gave the app (`ASAuthorizationAppleIDCredential`), in types of this
/// SDK, so that LatchkeyCore never links AuthenticationServices and runs wherever Swift does.
///
/// The `Latchkey` module's `AppleSignInPresenter` and `LatchkeyAppleSignInButton` make these; an
/// app that runs its own `ASAuthorizationController` makes one from the credential it received
/// and passes it, with the raw nonce, to ``LatchkeyClient/signIn(with:rawNonce:)``.
public struct AppleIDCredential: Sendable, Equatable {
    /// The credential's `identityToken`, as UTF-8 text: the JWT the server verifies with Apple's keys.
    public var identityToken: String
    /// The credential's `authorizationCode`, as UTF-8 text: single use and valid five minutes, so it
    /// goes to the server at once, which exchanges it for the refresh token that account deletion
    /// revokes.
    public var authorizationCode: String
    /// The credential's `user`: Apple's stable id for the person in the team's apps, the identity's
    /// ``IdentityBody/subject`` on the server (what ``LatchkeyClient/unlink(provider:subject:)`` takes).
    public var user: String
    /// `fullName?.givenName`. Apple shares the name only at the person's first authorization of the
    /// app, never in the id token: the SDK forwards it then, and the server keeps it.
    public var givenName: String?
    /// `fullName?.familyName`, shared only at the first authorization, as ``givenName``.
    public var familyName: String?
    /// The credential's `email`, for the app's own use. Not sent: the server reads the address from
    /// the id token, where Apple signed it.
    public var email: String?

    /// Creates a credential from what `ASAuthorizationAppleIDCredential` gave.
    public init(
        identityToken: String, authorizationCode: String, user: String, givenName: String? = nil,
        familyName: String? = nil, email: String? = nil
    ) {
        self.identityToken = identityToken
        self.authorizationCode = authorizationCode
        self.user = user
        self.givenName = givenName
        self.familyName = familyName
        self.email = email
    }

    /// The body of `POST /v1/auth/apple` (and of an Apple link) for this credential: the raw nonce
    /// (Apple was given its SHA-256), and the name parts only when Apple shared them, so a later
    /// sign-in never sends an empty name over the one the server kept.
    func request(rawNonce: String) -> AppleExchangeRequest {
        AppleExchangeRequest(
            idToken: identityToken, authorizationCode: authorizationCode, nonce: rawNonce,
            givenName: Self.shared(givenName), familyName: Self.shared(familyName))
    }

    /// `part` when it holds more than whitespace.
    private static func shared(_ part: String?) -> String? {
        guard let part, !part.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
        return part
    }
}
