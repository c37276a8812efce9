import Foundation

/// How ``LatchkeySessionModel`` (and the login button over it) signs a person in: the Facebook
/// SDK's login manager, Easy Login in a web authentication session, Sign in with Apple, or the
/// app's own code.
public struct SignInMethod: Sendable {
    let run: @Sendable (LatchkeyClient) async throws(LatchkeyError) -> Void

    /// Signs in with the app's own code (a credential it got elsewhere, a custom flow).
    public static func custom(
        _ body: @escaping @Sendable (LatchkeyClient) async throws(LatchkeyError) -> Void
    )
        -> SignInMethod
    {
        SignInMethod(run: body)
    }

    /// The Facebook SDK's login manager (``LatchkeyClient/signInWithFacebook(using:permissions:tracking:fieldsMapping:)``).
    /// - Parameter tracking: asked at each sign-in, since the person may change it in Settings
    ///   (on Apple platforms: `TrackingAuthorization.current`, or after asking for it).
    public static func facebook(
        _ provider: some FacebookLoginProvider, permissions: Set<String> = [],
        fieldsMapping: [String: String]? = nil, tracking: @escaping @Sendable () async -> TrackingAuthorization
    ) -> SignInMethod {
        SignInMethod { client throws(LatchkeyError) in
            _ = try await client.signInWithFacebook(
                using: provider, permissions: permissions, tracking: await tracking(), fieldsMapping: fieldsMapping)
        }
    }

    /// Sign in with Apple through the app's provider (``LatchkeyClient/signInWithApple(using:scopes:)``):
    /// `AppleSignInPresenter` on Apple platforms.
    public static func apple(
        _ provider: some AppleSignInProvider, scopes: Set<AppleScope> = [.fullName, .email]
    ) -> SignInMethod {
        SignInMethod { client throws(LatchkeyError) in
            _ = try await client.signInWithApple(using: provider, scopes: scopes)
        }
    }

    /// Easy Login, no Facebook SDK (``LatchkeyClient/signInWithEasyLogin(using:fieldsMapping:permissions:prefersEphemeral:)``).
    public static func easyLogin(
        _ authenticator: some WebAuthenticator, permissions: [String] = [], fieldsMapping: [String: String]? = nil,
        prefersEphemeral: Bool = false
    ) -> SignInMethod {
        SignInMethod { client throws(LatchkeyError) in
            _ = try await client.signInWithEasyLogin(
                using: authenticator, fieldsMapping: fieldsMapping, permissions: permissions,
                prefersEphemeral: prefersEphemeral)
        }
    }
}
