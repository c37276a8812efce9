import Foundation
import LatchkeyAPI

/// Sign in with Apple: signing in and linking with what Apple gave the app (the DocC article
/// "Sign in with Apple" walks through it).
extension LatchkeyClient {
    /// Signs in through the app's Sign in with Apple: makes a fresh nonce, gives Apple its SHA-256
    /// and the server the raw value, and exchanges the credential for a session (with the name,
    /// which Apple shares only at the person's first authorization).
    ///
    /// A session already open stays usable until this one succeeds, as with
    /// ``signIn(with:fieldsMapping:)``. A guest keeps its account with
    /// ``linkWithApple(using:scopes:)`` instead.
    /// - Parameters:
    ///   - provider: the app's Sign in with Apple (`AppleSignInPresenter` on Apple platforms).
    ///   - scopes: what to ask the person to share.
    /// - Throws: `user_cancelled` when the person cancelled; `apple_login_failed` when Apple's
    ///   sign-in failed or gave no usable credential; otherwise what ``signIn(with:rawNonce:)`` throws.
    @discardableResult
    public func signInWithApple(
        using provider: some AppleSignInProvider, scopes: Set<AppleScope> = [.fullName, .email]
    ) async throws(LatchkeyError) -> SignInResult {
        let nonce = Nonce()
        let credential = try await provider.credential(nonce: nonce, scopes: scopes)
        return try await signIn(with: credential, rawNonce: nonce.raw)
    }

    /// Exchanges what Sign in with Apple gave the app for a session, for apps that run their own
    /// `ASAuthorizationController` or `SignInWithAppleButton`: set the request's `nonce` to a
    /// ``Nonce``'s `sha256` and pass its `raw` here.
    /// - Parameters:
    ///   - credential: what `ASAuthorizationAppleIDCredential` gave.
    ///   - rawNonce: the nonce whose SHA-256 hex was the request's `nonce`.
    /// - Throws: the server's codes (`apple_code_invalid` for a code Apple refused: authorize
    ///   again; `apple_unavailable`; `nonce_mismatch`; `not_found` while the server has Apple off);
    ///   `cancelled` when a sign-out or another sign-in came first.
    @discardableResult
    public func signIn(with credential: AppleIDCredential, rawNonce: String) async throws(LatchkeyError) -> SignInResult
    {
        try await exchange(at: "v1/auth/apple", credential.request(rawNonce: rawNonce).json)
    }

    /// Adds the person's Apple ID to the signed-in user through the app's Sign in with Apple (a
    /// guest becomes a full user and keeps its id), as ``link(with:)`` with
    /// ``LinkCredential/apple(_:rawNonce:)``.
    ///
    /// A conflict (``LatchkeyError/Code/identityAlreadyLinked``) has spent the authorization
    /// code at Apple: to merge, sign in with Apple again (a new authorization), then call
    /// ``completeLink(ticket:)`` with the error's ``LatchkeyError/linkTicket``.
    /// - Throws: `not_signed_in` without a session (before Apple's sheet is shown); as
    ///   ``signInWithApple(using:scopes:)`` for Apple's side and ``link(with:)`` for the server's.
    @discardableResult
    public func linkWithApple(
        using provider: some AppleSignInProvider, scopes: Set<AppleScope> = [.fullName, .email]
    ) async throws(LatchkeyError) -> LatchkeyUser {
        // Asking Apple first would show the sheet, and spend an authorization, for nothing.
        guard credentials != nil else { throw LatchkeyError.notSignedIn }
        let nonce = Nonce()
        let credential = try await provider.credential(nonce: nonce, scopes: scopes)
        return try await link(with: .apple(credential, rawNonce: nonce.raw))
    }
}
