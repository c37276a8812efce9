// COMPILE-ONLY STAND-IN for Apple's AuthenticationServices framework, web authentication: it mirrors
// the pages https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession
// (both initializers, ASWebAuthenticationSession.Callback, CompletionHandler, presentationContextProvider,
// prefersEphemeralWebBrowserSession, start(), cancel()),
// https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsessionerror,
// https://developer.apple.com/documentation/authenticationservices/aswebauthenticationpresentationcontextproviding
// and https://developer.apple.com/documentation/authenticationservices/aspresentationanchor (iOS's).
//
// It declares, with Apple's spellings, signatures, isolation and availability, only what
// Sources/Latchkey/Apple uses, so EasyLoginPresenter is type-checked on every Linux build (target
// LatchkeyAppleAdapterCheck). Nothing is shown: `start()` returns false and the completion handler is
// never called. Package.swift declares this target only when the manifest is built on Linux; it is never
// built for, or shipped on, an Apple platform, and the Latchkey target never uses it.

import Foundation
import SwiftUIStandIn

/// Apple (iOS, visionOS): `typealias ASPresentationAnchor = UIWindow` (`NSWindow` on macOS): the window
/// the sheet is presented from.
public typealias ASPresentationAnchor = UIWindow

/// Stands in for UIKit's `UIWindow` only as far as the adapter can tell: a main-actor class (so, like
/// Apple's, it is `Sendable` and may be kept in a `nonisolated let`).
@MainActor
open class UIWindow: NSObject {}

/// Apple: `@MainActor protocol ASWebAuthenticationPresentationContextProviding : NSObjectProtocol`;
/// the session asks it for the window to present from.
@available(iOS 13.0, macOS 10.15, macCatalyst 13.1, visionOS 1.0, *)
@MainActor
public protocol ASWebAuthenticationPresentationContextProviding: NSObjectProtocol {
    /// Apple: tells the delegate from which window it should present content to the user.
    func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor
}

/// Apple: `class ASWebAuthenticationSession : NSObject`; a session that authenticates a user through a
/// web service.
@available(iOS 12.0, macOS 10.15, macCatalyst 13.0, tvOS 16.0, watchOS 6.2, visionOS 1.0, *)
open class ASWebAuthenticationSession: NSObject {
    /// Apple: `typealias CompletionHandler = (URL?, (any Error)?) -> Void`.
    public typealias CompletionHandler = (URL?, (any Error)?) -> Void

    /// Apple: `class Callback : NSObject`; which navigation ends the session. Created only through its
    /// class methods (Apple marks `init()` unavailable).
    @available(iOS 17.4, macOS 14.4, macCatalyst 17.4, tvOS 17.4, watchOS 10.4, visionOS 1.1, *)
    public class Callback: NSObject {
        required init(matching _: String) { super.init() }

        /// Apple: creates a callback object that matches against URLs with the given custom scheme.
        public class func customScheme(_ customScheme: String) -> Self { Self(matching: customScheme) }

        /// Apple: creates a callback object that matches against HTTPS URLs with the given host and path.
        public class func https(host: String, path: String) -> Self { Self(matching: "https://" + host + path) }
    }

    /// Apple: a delegate that provides a display context in which the system can present the session.
    @available(iOS 13.0, macOS 10.15, macCatalyst 13.1, visionOS 1.0, *)
    public weak var presentationContextProvider: (any ASWebAuthenticationPresentationContextProviding)?

    /// Apple: a Boolean value that indicates whether the session should ask the browser for a private
    /// authentication session.
    @available(iOS 13.0, macOS 10.15, macCatalyst 13.1, watchOS 6.2, visionOS 1.0, *)
    public var prefersEphemeralWebBrowserSession = false

    /// Apple: creates a web authentication session instance (custom URL scheme callbacks only).
    public init(url: URL, callbackURLScheme: String?, completionHandler: @escaping CompletionHandler) {
        super.init()
    }

    /// Apple: creates a web authentication session instance that uses a callback to evaluate a
    /// redirection URL.
    @available(iOS 17.4, macOS 14.4, macCatalyst 17.4, tvOS 17.4, watchOS 10.4, visionOS 1.1, *)
    public init(url: URL, callback: Callback, completionHandler: @escaping CompletionHandler) {
        super.init()
    }

    /// Apple: starts a web authentication session; false when it could not start.
    open func start() -> Bool { false }

    /// Apple: cancels a web authentication session (dismisses the view if presented).
    @available(iOS 12.0, macOS 10.15, macCatalyst 13.0, watchOS 6.2, visionOS 1.0, *)
    open func cancel() {}
}

/// Apple: `struct ASWebAuthenticationSessionError`, the Swift face of the `NSError`s with domain
/// `ASWebAuthenticationSessionErrorDomain` that the completion handler receives.
@available(iOS 12.0, macOS 10.15, macCatalyst 13.0, tvOS 16.0, watchOS 6.2, visionOS 1.0, *)
public struct ASWebAuthenticationSessionError: CustomNSError, Hashable, Error {
    /// Apple: the error code for a web authentication session error.
    public enum Code: Int, Sendable, Equatable {
        /// Apple: the login has been canceled.
        case canceledLogin = 1
        /// Apple: a context wasn't provided.
        case presentationContextNotProvided = 2
        /// Apple: the context was invalid.
        case presentationContextInvalid = 3
    }

    /// Apple: the error's code (from the bridged `NSError`).
    public let code: Code

    /// Apple: creates an error with `code`.
    public init(_ code: Code) { self.code = code }

    /// Apple: the error domain, `ASWebAuthenticationSessionErrorDomain`.
    public static var errorDomain: String { "com.apple.AuthenticationServices.WebAuthenticationSession" }

    /// Apple: the `NSError` code, `code.rawValue`.
    public var errorCode: Int { code.rawValue }

    /// Apple: the login has been canceled.
    public static var canceledLogin: Code { .canceledLogin }
    /// Apple: a context wasn't provided.
    public static var presentationContextNotProvided: Code { .presentationContextNotProvided }
    /// Apple: the context was invalid.
    public static var presentationContextInvalid: Code { .presentationContextInvalid }
}

/// Apple (the SwiftUI cross-import of AuthenticationServices): `@MainActor struct
/// WebAuthenticationSession`, the environment value `webAuthenticationSession`
/// (https://developer.apple.com/documentation/authenticationservices/webauthenticationsession). The
/// stand-in never shows anything: every call ends as a cancelled login.
@available(iOS 16.4, macOS 13.3, tvOS 16.4, watchOS 9.4, visionOS 1.0, *)
@MainActor
public struct WebAuthenticationSession {
    /// Apple: `struct BrowserSession`; whether the browser shares cookies with the person's browser.
    public struct BrowserSession: Sendable, Equatable {
        let ephemeral: Bool
        /// Apple: no cookies or browsing data shared with the person's browser.
        public static let ephemeral = BrowserSession(ephemeral: true)
    }

    /// Stand-in only: SwiftUI creates these; the stand-in lets a test make one.
    public init() {}

    /// Apple: `func authenticate(using url: URL, callbackURLScheme: String, preferredBrowserSession:
    /// WebAuthenticationSession.BrowserSession? = nil) async throws -> URL`.
    public func authenticate(
        using url: URL, callbackURLScheme: String, preferredBrowserSession: BrowserSession? = nil
    ) async throws -> URL {
        throw ASWebAuthenticationSessionError(.canceledLogin)
    }

    /// Apple (iOS 17.4, macOS 14.4): `func authenticate(using url: URL, callback:
    /// ASWebAuthenticationSession.Callback, preferredBrowserSession: WebAuthenticationSession.BrowserSession?
    /// = nil, additionalHeaderFields: [String : String]) async throws -> URL`.
    @available(iOS 17.4, macOS 14.4, tvOS 17.4, watchOS 10.4, visionOS 1.1, *)
    public func authenticate(
        using url: URL, callback: ASWebAuthenticationSession.Callback, preferredBrowserSession: BrowserSession? = nil,
        additionalHeaderFields: [String: String]
    ) async throws -> URL {
        throw ASWebAuthenticationSessionError(.canceledLogin)
    }
}

/// Apple (the SwiftUI cross-import): `extension EnvironmentValues { var webAuthenticationSession }`.
extension EnvironmentValues {
    /// Apple: the web authentication session of the view's scene.
    @available(iOS 16.4, macOS 13.3, tvOS 16.4, watchOS 9.4, visionOS 1.0, *)
    @MainActor public var webAuthenticationSession: WebAuthenticationSession { WebAuthenticationSession() }
}
