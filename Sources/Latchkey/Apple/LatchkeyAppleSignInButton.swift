// Apple's own Sign in with Apple button (SwiftUI's SignInWithAppleButton, which Apple's guidelines ask
// apps to prefer) signing in through LatchkeySessionModel, beside LatchkeyLoginButton. The button
// runs the authorization itself, so this file only gives it a nonce and hands its answer to the
// client; the model's events and faces are tested on Linux. Compiled as LatchkeyLoginButton.swift says.
#if canImport(AuthenticationServices) && canImport(SwiftUI) && canImport(Observation) && (os(iOS) || os(macOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import AuthenticationServices
import Foundation
import LatchkeyCore
import SwiftUI

/// The system's "Sign in with Apple" button, signing in through the session model: it asks Apple
/// for the scopes given with a fresh nonce, sends the credential to the server, and reports the
/// model's events for its own taps, as `LatchkeyLoginButton` does:
///
/// ```swift
/// LatchkeyAppleSignInButton(session: session) { event in
///     if case .failed(let error) = event, error.shouldNotifyUser { alert = error.userMessage }
/// }
/// .signInWithAppleButtonStyle(.black)
/// .frame(height: 44)
/// ```
///
/// Show it while the person is signed out; it ignores taps while the model is working. A person
/// closing Apple's sheet is reported as `.failed` with `user_cancelled` (never ``LatchkeySessionModel/lastError``).
@available(iOS 15.0, macOS 12.0, visionOS 1.0, *)
public struct LatchkeyAppleSignInButton: View {
    @ObservedObject private var session: LatchkeySessionModel
    /// This button's actions, so that its events are its own.
    @State private var action = LatchkeyActionID()
    /// The nonce of the request Apple is answering.
    @State private var requests = AppleSignInButtonRequests()
    private let label: SignInWithAppleButton.Label
    private let scopes: Set<AppleScope>
    private let onEvent: @MainActor (LatchkeySessionEvent) -> Void

    /// A button over `session`.
    /// - Parameters:
    ///   - label: Apple's wording: `.signIn` ("Sign in with Apple"), `.continue` or `.signUp`.
    ///   - scopes: what to ask the person to share.
    ///   - onEvent: the faces and the user as ``LatchkeySessionModel/events(for:)`` reports them,
    ///     and the failures of this button's own taps.
    public init(
        session: LatchkeySessionModel, label: SignInWithAppleButton.Label = .signIn,
        scopes: Set<AppleScope> = [.fullName, .email],
        onEvent: @escaping @MainActor (LatchkeySessionEvent) -> Void = { _ in }
    ) {
        _session = ObservedObject(wrappedValue: session)
        self.label = label
        self.scopes = scopes
        self.onEvent = onEvent
    }

    /// The button.
    public var body: some View {
        SignInWithAppleButton(label) { request in
            requests.prepare(request, scopes: scopes)
        } onCompletion: { outcome in
            let method = requests.method(answering: outcome)
            Task { await session.signIn(method, action: action) }
        }
        .disabled(session.buttonState == .working)
        .task {
            for await event in session.events(for: action) { onEvent(event) }
        }
    }
}

/// The button's side of the nonce: a fresh one for each request Apple's button makes, its SHA-256
/// to Apple and the raw value to the server with Apple's answer.
@MainActor
final class AppleSignInButtonRequests {
    private var nonce: Nonce?

    nonisolated init() {}

    /// Readies the request the button is about to send: the scopes and a fresh nonce's hash.
    func prepare(_ request: ASAuthorizationAppleIDRequest, scopes: Set<AppleScope>) {
        let fresh = Nonce()
        nonce = fresh
        request.requestedScopes = scopes.authorizationScopes
        request.nonce = fresh.sha256
    }

    /// The sign-in for Apple's answer to the last request: `user_cancelled` for a cancel,
    /// `apple_login_failed` for Apple's errors (as the client's own Apple sign-in reports them).
    func method(answering outcome: Result<ASAuthorization, any Error>) -> SignInMethod {
        let nonce = self.nonce
        self.nonce = nil
        // Read now: ASAuthorization is not Sendable; the credential is.
        let answer = Result { try AppleSignInResult(outcome) }
        return .custom { client throws(LatchkeyError) in
            guard let nonce else {
                throw LatchkeyError(
                    code: .appleLoginFailed, message: "Sign in with Apple answered a request this button did not make.")
            }
            switch answer {
            case .success(.authorized(let credential)):
                _ = try await client.signIn(with: credential, rawNonce: nonce.raw)
            case .success(.cancelled):
                throw LatchkeyError(code: .userCancelled, message: "Sign in with Apple was cancelled.")
            case .failure(let error as LatchkeyError):
                throw error
            case .failure(let error):
                throw LatchkeyError(code: .appleLoginFailed, message: "Sign in with Apple failed.", underlying: error)
            }
        }
    }
}
#endif
