// Sign in with Apple through ASAuthorizationController: a thin adapter to LatchkeyCore's
// AppleSignInProvider, whose caller (LatchkeyClient.signInWithApple) makes the nonce and does the
// rest where it is tested on every platform. Compiled as EasyLoginPresenter.swift says.
#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import AuthenticationServices
import Foundation
import LatchkeyCore

/// Runs Sign in with Apple (`ASAuthorizationAppleIDProvider` in an `ASAuthorizationController`)
/// as the ``AppleSignInProvider`` that `LatchkeyClient.signInWithApple(using:scopes:)` drives:
///
/// ```swift
/// try await AppleSignInPresenter(anchor: window).signIn(client: client)
/// ```
///
/// The request asks for the scopes given and carries the nonce's SHA-256 hex; a person closing
/// Apple's sheet is ``AppleSignInResult/cancelled``. Main-actor isolated because the sheet is UI.
/// In SwiftUI, `LatchkeyAppleSignInButton` needs no window.
@MainActor
public final class AppleSignInPresenter: AppleSignInProvider {
    /// The window Apple's sheet is presented from.
    private let anchor: ASPresentationAnchor
    /// The authorizations under way, by attempt: each is finished exactly once, by whichever comes
    /// first of its delegate's answer and the cancellation of the task waiting for it.
    private var attempts: [UInt64: Attempt] = [:]
    private var nextAttempt: UInt64 = 0

    private struct Attempt {
        let controller: ASAuthorizationController
        /// Held here: the controller holds its delegate weakly.
        let delegate: AuthorizationDelegate
        let continuation: CheckedContinuation<AppleSignInResult, any Error>
    }

    /// A presenter whose sheets are attached to `anchor`.
    /// - Parameter anchor: the window Apple's sheet is presented from (the key window of the scene
    ///   that started the sign-in).
    public init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    /// Signs in with Apple through the sheet and returns the sign-in.
    /// - Throws: `user_cancelled` when the person closes the sheet; otherwise what
    ///   `signInWithApple(using:scopes:)` throws.
    @discardableResult
    public func signIn(
        client: LatchkeyClient, scopes: Set<AppleScope> = [.fullName, .email]
    ) async throws(LatchkeyError) -> SignInResult {
        try await client.signInWithApple(using: self, scopes: scopes)
    }

    /// Shows Apple's sheet for a request with `scopes` and the nonce hash, and returns what Apple
    /// gave back.
    /// - Throws: Apple's error other than a cancel; `apple_login_failed` for a credential without
    ///   tokens; `CancellationError` when the task is cancelled (the sheet is dismissed from
    ///   iOS 16 and macOS 13).
    public func signIn(nonceSHA256: String, scopes: Set<AppleScope>) async throws -> AppleSignInResult {
        let id = nextAttempt
        nextAttempt &+= 1
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                start(id, nonceSHA256: nonceSHA256, scopes: scopes, continuation: continuation)
            }
        } onCancel: {
            Task { @MainActor in self.finish(id, with: .failure(CancellationError()), dismiss: true) }
        }
    }

    private func start(
        _ id: UInt64, nonceSHA256: String, scopes: Set<AppleScope>,
        continuation: CheckedContinuation<AppleSignInResult, any Error>
    ) {
        // Cancelled before the sheet existed: the cancellation handler found nothing to finish.
        if Task.isCancelled { return continuation.resume(throwing: CancellationError()) }
        let request = ASAuthorizationAppleIDProvider().createRequest()
        request.requestedScopes = scopes.authorizationScopes
        request.nonce = nonceSHA256
        let controller = ASAuthorizationController(authorizationRequests: [request])
        let delegate = AuthorizationDelegate(anchor: anchor) { [weak self] outcome in
            Task { @MainActor in self?.finish(id, with: outcome, dismiss: false) }
        }
        controller.delegate = delegate
        controller.presentationContextProvider = delegate
        attempts[id] = Attempt(controller: controller, delegate: delegate, continuation: continuation)
        controller.performRequests()
    }

    /// Ends attempt `id` once: later calls for it (the delegate after a cancellation, or the
    /// reverse) find nothing.
    private func finish(_ id: UInt64, with outcome: Result<AppleSignInResult, any Error>, dismiss: Bool) {
        guard let attempt = attempts.removeValue(forKey: id) else { return }
        if dismiss, #available(iOS 16.0, macOS 13.0, visionOS 1.0, *) { attempt.controller.cancel() }
        attempt.continuation.resume(with: outcome)
    }
}

/// One authorization's delegate and presentation context: one per controller, so an answer always
/// names its own attempt (a late answer of a finished one finds nothing).
@MainActor
private final class AuthorizationDelegate: NSObject, ASAuthorizationControllerDelegate,
    ASAuthorizationControllerPresentationContextProviding
{
    /// `nonisolated` so the system can ask for it from the nonisolated `presentationAnchor(for:)`
    /// (a window is main-actor isolated, hence `Sendable`).
    private nonisolated let anchor: ASPresentationAnchor
    private nonisolated let answer: @Sendable (Result<AppleSignInResult, any Error>) -> Void

    init(anchor: ASPresentationAnchor, answer: @escaping @Sendable (Result<AppleSignInResult, any Error>) -> Void) {
        self.anchor = anchor
        self.answer = answer
        super.init()
    }

    // The three methods are nonisolated, as EasyLoginPresenter's anchor is: they satisfy Apple's
    // protocols whether or not the SDK at hand marks them main-actor, and read what Apple gave
    // into Sendable values before anything leaves the call.

    nonisolated func authorizationController(
        controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization
    ) {
        answer(Result { try AppleSignInResult(.success(authorization)) })
    }

    nonisolated func authorizationController(
        controller: ASAuthorizationController, didCompleteWithError error: any Error
    ) {
        answer(Result { try AppleSignInResult(.failure(error)) })
    }

    nonisolated func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor { anchor }
}
#endif
