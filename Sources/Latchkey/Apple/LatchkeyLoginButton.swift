// The seed's FBLoginView as a SwiftUI button: its faces, taps and delegate events all come from
// LatchkeySessionModel (tested on Linux); this file only draws them. Compiled on Apple platforms, and
// on Linux only against the SwiftUI stand-in (target LatchkeyAppleAdapterCheck).
#if canImport(SwiftUI) && canImport(Observation) && (os(iOS) || os(macOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import Foundation
import LatchkeyCore
import SwiftUI
#if canImport(UIKit) && (os(iOS) || LATCHKEY_APPLE_STAND_INS)
import UIKit
#endif

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
///
/// When a sign-in waits for the person's second factor (``LatchkeySessionModel/pendingSecondFactor``)
/// it shows a code prompt instead: a field for the authenticator's code and a Verify button; a
/// wrong code says so and the prompt stays.
@available(iOS 15.0, macOS 12.0, visionOS 1.0, *)
public struct LatchkeyLoginButton: View {
    @ObservedObject private var session: LatchkeySessionModel
    /// This button's actions, so that its alerts are its own (another window's button has another).
    @State private var action = LatchkeyActionID()
    /// The face last shown, to announce a change of it (not the first face).
    @State private var shownState: LoginButtonState?
    /// What the person typed into the second factor's prompt.
    @State private var code = ""

    private let method: SignInMethod
    private let signInTitle: LocalizedStringKey?
    private let signOutTitle: LocalizedStringKey?
    private let onEvent: @MainActor (LatchkeySessionEvent) -> Void

    /// A button over `session`.
    /// - Parameters:
    ///   - method: how a tap signs in.
    ///   - signInTitle: the signed-out face's title, looked up in the app's strings; by default
    ///     ``LatchkeyString/signIn`` ("Log in with Facebook", in the person's language).
    ///   - signOutTitle: the signed-in face's title, looked up in the app's strings; by default
    ///     ``LatchkeyString/signOut``.
    ///   - onEvent: the delegate: shown signed in, user fetched, shown signed out, and the failures
    ///     of this button's own taps (another button's, in another window, are not reported here).
    public init(
        session: LatchkeySessionModel, signingInWith method: SignInMethod,
        signInTitle: LocalizedStringKey? = nil, signOutTitle: LocalizedStringKey? = nil,
        onEvent: @escaping @MainActor (LatchkeySessionEvent) -> Void = { _ in }
    ) {
        _session = ObservedObject(wrappedValue: session)
        self.method = method
        self.signInTitle = signInTitle
        self.signOutTitle = signOutTitle
        self.onEvent = onEvent
    }

    /// The button. While working it shows progress, and VoiceOver reads (and is told) "Signing
    /// in…" or "Signing out…" instead of a title that is not what a tap does now.
    public var body: some View {
        if session.buttonState == .secondFactor {
            codePrompt
        } else {
            button
        }
    }

    /// The second factor's prompt: the authenticator's code, then Verify.
    private var codePrompt: some View {
        VStack(spacing: 8) {
            Text(LatchkeyString.secondFactorPrompt.localized)
            if session.lastError?.code == .factorCodeInvalid {
                Text(LatchkeyString.secondFactorCodeInvalid.localized)
            }
            TextField(LatchkeyString.secondFactorPrompt.localized, text: $code)
            Button {
                let entered = code
                code = ""
                Task { await session.resolveSecondFactor(code: entered, action: action) }
            } label: {
                Text(LatchkeyString.secondFactorVerify.localized)
            }
        }
    }

    /// The sign-in / sign-out button.
    private var button: some View {
        Button {
            Task { await session.toggle(signingInWith: method, action: action) }
        } label: {
            HStack(spacing: 8) {
                if session.buttonState == .working { ProgressView() }
                title
            }
        }
        .disabled(session.buttonState == .working)
        .accessibilityLabel(session.buttonState == .working ? Text(progress) : title)
        .task(id: session.buttonState) {
            let state = session.buttonState
            defer { shownState = state }
            if shownState != nil, shownState != .working, state == .working { announce(progress) }
        }
        .task {
            for await event in session.events(for: action) { onEvent(event) }
        }
    }

    private var title: Text {
        if session.buttonState == .signedIn {
            return signOutTitle.map { Text($0) } ?? Text(LatchkeyString.signOut.localized)
        }
        return signInTitle.map { Text($0) } ?? Text(LatchkeyString.signIn.localized)
    }

    /// Has VoiceOver read `text` out now.
    private func announce(_ text: String) {
        if #available(iOS 17.0, macOS 14.0, visionOS 1.0, *) {
            AccessibilityNotification.Announcement(text).post()
        } else {
            #if canImport(UIKit) && (os(iOS) || LATCHKEY_APPLE_STAND_INS)
            UIAccessibility.post(notification: .announcement, argument: text)
            #endif
        }
    }

    /// What the work under way is: signing out when someone is signed in, else signing in.
    private var progress: String {
        (session.isSignedIn ? LatchkeyString.signingOut : LatchkeyString.signingIn).localized
    }
}
#endif
