// COMPILE-ONLY STAND-IN for the SwiftUI cross-import of AuthenticationServices' Sign in with Apple
// button: it mirrors https://developer.apple.com/documentation/authenticationservices/signinwithapplebutton
// (init(_:onRequest:onCompletion:) and Label), with Apple's isolation and availability, so the
// adapter's button is type-checked on Linux (target LatchkeyAppleAdapterCheck). Nothing is drawn
// and the closures are never called.

import Foundation
import SwiftUIStandIn

/// Apple: `@MainActor @preconcurrency struct SignInWithAppleButton`; the system's Sign in with Apple
/// button, which runs the authorization itself and hands the outcome to `onCompletion`.
@available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, *)
@MainActor
@preconcurrency
public struct SignInWithAppleButton: PrimitiveStandInView {
    /// Apple: `struct Label`; the label that appears on the button.
    public struct Label: Sendable {
        let title: String
        /// Apple: "Sign in with Apple".
        public static let signIn = Label(title: "Sign in with Apple")
        /// Apple: "Continue with Apple".
        public static let `continue` = Label(title: "Continue with Apple")
        /// Apple: "Sign up with Apple".
        public static let signUp = Label(title: "Sign up with Apple")
    }

    /// Apple: `nonisolated init(_ label: SignInWithAppleButton.Label = .signIn, onRequest: @escaping
    /// (ASAuthorizationAppleIDRequest) -> Void, onCompletion: @escaping (Result<ASAuthorization, any
    /// Error>) -> Void)`.
    nonisolated public init(
        _ label: SignInWithAppleButton.Label = .signIn,
        onRequest: @escaping (ASAuthorizationAppleIDRequest) -> Void,
        onCompletion: @escaping (Result<ASAuthorization, any Error>) -> Void
    ) {}
}
