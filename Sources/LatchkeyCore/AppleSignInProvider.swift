import Foundation

/// What Sign in with Apple may ask the person to share (`ASAuthorization.Scope`).
public enum AppleScope: Sendable, Hashable, CaseIterable {
    /// The person's name (`.fullName`), shared at the first authorization only.
    case fullName
    /// The person's email address (`.email`), real or a private relay address.
    case email
}

/// How a Sign in with Apple attempt ended, when it did not fail: a credential, or the person
/// cancelling. A cancel is an outcome rather than an error, as ``FacebookLoginResult/isCancelled``
/// is, so a provider never has to guess which error the SDK reads as one.
public enum AppleSignInResult: Sendable, Equatable {
    /// The person authorized the app: what Apple gave.
    case authorized(AppleIDCredential)
    /// The person closed Apple's sheet (`ASAuthorizationError.canceled`).
    case cancelled
}

/// The app's Sign in with Apple, the one piece of AuthenticationServices the sign-in needs. The
/// `Latchkey` module's `AppleSignInPresenter` is one (over `ASAuthorizationController`); tests use
/// a stand-in, and other platforms may bring their own (a web flow, for instance).
public protocol AppleSignInProvider: Sendable {
    /// Runs Sign in with Apple, asking for `scopes`, with `nonceSHA256` as the request's `nonce`
    /// (Apple copies it into the id token's `nonce` claim, which the server checks against the raw
    /// value it receives), and returns what Apple gave back.
    /// - Returns: ``AppleSignInResult/cancelled`` when the person cancelled.
    /// - Throws: Apple's error for any other failure (the SDK reports it as `apple_login_failed`),
    ///   or `CancellationError` when the task was cancelled.
    func signIn(nonceSHA256: String, scopes: Set<AppleScope>) async throws -> AppleSignInResult
}

extension AppleSignInProvider {
    /// Asks for a credential with a fresh hash of `nonce`, as the SDK's errors: a cancel is
    /// `user_cancelled`, any other failure `apple_login_failed`.
    func credential(nonce: Nonce, scopes: Set<AppleScope>) async throws(LatchkeyError) -> AppleIDCredential {
        let result: AppleSignInResult
        do {
            result = try await signIn(nonceSHA256: nonce.sha256, scopes: scopes)
        } catch {
            throw LatchkeyError.wrapping(error, as: .appleLoginFailed, "Sign in with Apple failed.")
        }
        guard case .authorized(let credential) = result else {
            throw LatchkeyError.sdk(.userCancelled, "Sign in with Apple was cancelled.")
        }
        // Caught here rather than by the server, whose answer would not say it was Apple's doing.
        guard !credential.identityToken.isEmpty, !credential.authorizationCode.isEmpty else {
            throw LatchkeyError.sdk(
                .appleLoginFailed, "Sign in with Apple gave back no identity token or authorization code.")
        }
        return credential
    }
}
