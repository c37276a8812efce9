// Easy Login through SwiftUI's web authentication session (`@Environment(\.webAuthenticationSession)`),
// for apps without a window to anchor EasyLoginPresenter to. A thin adapter: the flow is the core's
// signInWithEasyLogin, tested on Linux. Compiled as EasyLoginPresenter.swift says.
#if canImport(AuthenticationServices) && canImport(SwiftUI) && (os(iOS) || os(macOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import AuthenticationServices
import Foundation
import LatchkeyCore
import SwiftUI

/// SwiftUI's `WebAuthenticationSession` as the ``WebAuthenticator`` Easy Login drives: the callback
/// is derived from the configured redirect URI (a custom scheme; an https universal link from
/// iOS 17.4 and macOS 14.4), and the person closing the sheet is `user_cancelled`.
@available(iOS 16.4, macOS 13.3, visionOS 1.0, *)
public struct SwiftUIWebAuthenticator: WebAuthenticator {
    private let session: WebAuthenticationSession

    /// Wraps the environment's session: `SwiftUIWebAuthenticator(webAuthenticationSession)`.
    public init(_ session: WebAuthenticationSession) { self.session = session }

    /// Shows `url` in the system's sheet and returns the redirect.
    public func authenticate(url: URL, callback: WebAuthenticationCallback, prefersEphemeral: Bool) async throws -> URL
    {
        let browser: WebAuthenticationSession.BrowserSession? = prefersEphemeral ? .ephemeral : nil
        do {
            if #available(iOS 17.4, macOS 14.4, visionOS 1.1, *) {
                return try await session.authenticate(
                    using: url, callback: callback.apple, preferredBrowserSession: browser, additionalHeaderFields: [:])
            }
            switch callback {
            case .customScheme(let scheme):
                return try await session.authenticate(
                    using: url, callbackURLScheme: scheme, preferredBrowserSession: browser)
            case .https: throw WebAuthenticationCallback.httpsNeedsNewerSystem
            }
        } catch {
            throw LatchkeyError.closedSheet(error) ?? error
        }
    }
}

@available(iOS 16.4, macOS 13.3, visionOS 1.0, *)
extension LatchkeyClient {
    /// ``signInWithEasyLogin(using:fieldsMapping:permissions:prefersEphemeral:)`` with SwiftUI's
    /// session, read from the environment: `@Environment(\.webAuthenticationSession)`.
    public func signInWithEasyLogin(
        using session: WebAuthenticationSession, fieldsMapping: [String: String]? = nil, permissions: [String] = [],
        prefersEphemeral: Bool = false
    ) async throws(LatchkeyError) -> LatchkeyUser {
        try await signInWithEasyLogin(
            using: SwiftUIWebAuthenticator(session), fieldsMapping: fieldsMapping, permissions: permissions,
            prefersEphemeral: prefersEphemeral)
    }
}

@available(iOS 16.4, macOS 13.3, visionOS 1.0, *)
extension SignInMethod {
    /// Easy Login in SwiftUI's web authentication session, for ``LatchkeyLoginButton``.
    public static func easyLogin(
        _ session: WebAuthenticationSession, permissions: [String] = [], fieldsMapping: [String: String]? = nil,
        prefersEphemeral: Bool = false
    ) -> SignInMethod {
        .easyLogin(
            SwiftUIWebAuthenticator(session), permissions: permissions, fieldsMapping: fieldsMapping,
            prefersEphemeral: prefersEphemeral)
    }
}
#endif
