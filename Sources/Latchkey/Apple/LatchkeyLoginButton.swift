// The seed's FBLoginView as a SwiftUI button: its faces, taps and delegate events all come from
// LatchkeySessionModel (tested on Linux); this file only draws them. Compiled on Apple platforms, and
// on Linux only against the SwiftUI stand-in (target LatchkeyAppleAdapterCheck).
#if canImport(SwiftUI) && canImport(Observation) && (os(iOS) || os(macOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import Foundation
import LatchkeyCore
import SwiftUI

/// A button that signs in when signed out and signs out when signed in (the Facebook SDK's
/// `FBLoginView`), showing progress while either is under way, with the delegate's events:
///
/// ```swift
/// LatchkeyLoginButton(session: session, signingInWith: .facebook(loginManager, tracking: { .current })) { event in
///     if case .failed(let error) = event, error.shouldNotifyUser { alert = error.userMessage }
/// }
/// ```
///
/// Style it as any button (`.buttonStyle(.borderedProminent)`, `.tint(...)`).
@available(iOS 17.0, macOS 14.0, visionOS 1.0, *)
public struct LatchkeyLoginButton: View {
    private let session: LatchkeySessionModel
    private let method: SignInMethod
    private let signInTitle: LocalizedStringKey
    private let signOutTitle: LocalizedStringKey
    private let onEvent: @MainActor (LatchkeySessionEvent) -> Void

    /// A button over `session`.
    /// - Parameters:
    ///   - method: how a tap signs in.
    ///   - signInTitle: the signed-out face's title, looked up in the app's strings.
    ///   - signOutTitle: the signed-in face's title, looked up in the app's strings.
    ///   - onEvent: the delegate: shown signed in, user fetched, shown signed out, failed.
    public init(
        session: LatchkeySessionModel, signingInWith method: SignInMethod,
        signInTitle: LocalizedStringKey = "Log in with Facebook", signOutTitle: LocalizedStringKey = "Log out",
        onEvent: @escaping @MainActor (LatchkeySessionEvent) -> Void = { _ in }
    ) {
        self.session = session
        self.method = method
        self.signInTitle = signInTitle
        self.signOutTitle = signOutTitle
        self.onEvent = onEvent
    }

    /// The button.
    public var body: some View {
        Button {
            Task { await session.toggle(signingInWith: method) }
        } label: {
            HStack(spacing: 8) {
                if session.buttonState == .working { ProgressView() }
                Text(session.buttonState == .signedIn ? signOutTitle : signInTitle)
            }
        }
        .disabled(session.buttonState == .working)
        .task {
            for await event in session.events() { onEvent(event) }
        }
    }
}
#endif
