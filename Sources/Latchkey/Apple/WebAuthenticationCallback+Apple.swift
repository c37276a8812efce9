// What the two web-authentication adapters (EasyLoginPresenter over ASWebAuthenticationSession,
// SwiftUIWebAuthenticator over SwiftUI's WebAuthenticationSession) share: the callback in Apple's
// terms, and a closed sheet as `user_cancelled`. Compiled as they are (see EasyLoginPresenter.swift).
#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import AuthenticationServices
import Foundation
import LatchkeyCore

extension WebAuthenticationCallback {
    /// The same callback as Apple's `ASWebAuthenticationSession.Callback` (which, unlike a callback
    /// scheme, can also catch an https redirect).
    @available(iOS 17.4, macOS 14.4, visionOS 1.1, *)
    var apple: ASWebAuthenticationSession.Callback {
        switch self {
        case .customScheme(let scheme): return .customScheme(scheme)
        case .https(let host, let path): return .https(host: host, path: path)
        }
    }

    /// The error for an https callback on a system without `ASWebAuthenticationSession.Callback`.
    static let httpsNeedsNewerSystem = LatchkeyError(
        code: .invalidConfiguration,
        message: "An https redirectURI needs iOS 17.4 or macOS 14.4 (ASWebAuthenticationSession.Callback); "
            + "use a custom scheme before.")
}

extension LatchkeyError {
    /// `error` as `user_cancelled` when it is the system's "the person closed the sheet"; `nil` otherwise.
    static func closedSheet(_ error: any Error) -> LatchkeyError? {
        guard let error = error as? ASWebAuthenticationSessionError, error.code == .canceledLogin else { return nil }
        return LatchkeyError(code: .userCancelled, message: "The person closed the login sheet.", underlying: error)
    }
}
#endif
