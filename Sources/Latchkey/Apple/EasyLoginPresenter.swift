// Easy Login in the system's web authentication sheet: a thin adapter from ASWebAuthenticationSession
// to LatchkeyCore's WebAuthenticator, whose caller (LatchkeyClient.signInWithEasyLogin) does
// the rest where it is tested on every platform. Compiled on the platforms with the sheet, and on Linux
// only by the test target LatchkeyAppleAdapterCheck, against compile-only stand-ins of
// AuthenticationServices (Tests/AppleStandIns, mapped onto the Apple name there alone); the platform
// test is a second guard that a Linux build of Latchkey never contains it.
#if canImport(AuthenticationServices) && (os(iOS) || os(macOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import AuthenticationServices
import Foundation
import LatchkeyCore

/// Runs Easy Login in the system's web authentication sheet (`ASWebAuthenticationSession`): it
/// shares Safari's Facebook cookies, shows the server's address, and hands back the redirect without
/// the app declaring a URL scheme handler.
///
/// ```swift
/// let user = try await EasyLoginPresenter(anchor: window).signIn(client: client)
/// ```
///
/// It is the ``WebAuthenticator`` that
/// `LatchkeyClient.signInWithEasyLogin(using:fieldsMapping:permissions:prefersEphemeral:)` drives;
/// main-actor isolated because the sheet is UI.
@MainActor
public final class EasyLoginPresenter: NSObject, WebAuthenticator,
    ASWebAuthenticationPresentationContextProviding
{
    /// The window the sheet is presented from; `nonisolated` so the system can ask for it from the
    /// nonisolated `presentationAnchor(for:)` (a window is main-actor isolated, hence `Sendable`).
    private nonisolated let anchor: ASPresentationAnchor
    /// The sheets showing, by attempt: each is finished exactly once, by whichever comes first of its
    /// completion handler, a failed start, and the cancellation of the task waiting for it.
    private var sheets: [UInt64: Sheet] = [:]
    private var nextSheet: UInt64 = 0

    private struct Sheet {
        let session: ASWebAuthenticationSession
        let continuation: CheckedContinuation<URL, any Error>
    }

    /// A presenter whose sheets are attached to `anchor`.
    /// - Parameter anchor: the window the sheet is presented from (the key window of the scene that
    ///   started the sign-in).
    public init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
        super.init()
    }

    /// Signs in with Easy Login through the sheet and returns the user: the client's `redirectURI`
    /// (a custom scheme, or https on iOS 17.4 / macOS 14.4 and later) says which redirect ends it.
    /// - Parameters:
    ///   - client: configured with `oauthClientID` and `redirectURI`.
    ///   - fieldsMapping: Facebook field → user property; the server's default when `nil`.
    ///   - permissions: Facebook permissions beyond `public_profile`.
    ///   - prefersEphemeral: do not share cookies with Safari (the person types their password again).
    /// - Throws: `user_cancelled` when the person closes the sheet, `cancelled` when the task is
    ///   cancelled, otherwise what `signInWithEasyLogin` throws.
    public func signIn(
        client: LatchkeyClient, fieldsMapping: [String: String]? = nil, permissions: [String] = [],
        prefersEphemeral: Bool = false
    ) async throws(LatchkeyError) -> LatchkeyUser {
        try await client.signInWithEasyLogin(
            using: self, fieldsMapping: fieldsMapping, permissions: permissions, prefersEphemeral: prefersEphemeral)
    }

    /// Shows `url` in the sheet and returns the redirect that matches `callback`.
    /// - Throws: `LatchkeyError` `user_cancelled` when the person closes the sheet;
    ///   `invalid_configuration` for an https callback before iOS 17.4 / macOS 14.4, or when the sheet
    ///   cannot start (no window in a foreground scene, another sheet showing); `CancellationError`
    ///   when the task is cancelled (the sheet is dismissed); the session's own error otherwise.
    public func authenticate(
        url: URL, callback: WebAuthenticationCallback, prefersEphemeral: Bool
    ) async throws
        -> URL
    {
        let id = nextSheet
        nextSheet &+= 1
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                present(
                    id, url: url, callback: callback, prefersEphemeral: prefersEphemeral, continuation: continuation)
            }
        } onCancel: {
            Task { @MainActor in self.finish(id, with: .failure(CancellationError()), dismiss: true) }
        }
    }

    /// The window to present the sheet from.
    public nonisolated func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
        anchor
    }

    private func present(
        _ id: UInt64, url: URL, callback: WebAuthenticationCallback, prefersEphemeral: Bool,
        continuation: CheckedContinuation<URL, any Error>
    ) {
        // Cancelled before the sheet existed: the cancellation handler found nothing to finish.
        if Task.isCancelled { return continuation.resume(throwing: CancellationError()) }
        // @Sendable: the system does not promise which thread calls it; the outcome hops to the main actor.
        let completion: ASWebAuthenticationSession.CompletionHandler = { @Sendable url, error in
            let outcome = Self.outcome(url: url, error: error)
            Task { @MainActor in self.finish(id, with: outcome, dismiss: false) }
        }
        let session: ASWebAuthenticationSession
        do {
            session = try Self.session(url: url, callback: callback, completion: completion)
        } catch {
            return continuation.resume(throwing: error)
        }
        session.presentationContextProvider = self
        session.prefersEphemeralWebBrowserSession = prefersEphemeral
        sheets[id] = Sheet(session: session, continuation: continuation)
        if !session.start() {
            let error = LatchkeyError(
                code: .invalidConfiguration,
                message: "The web authentication sheet did not start: the anchor must be a window of a foreground "
                    + "scene, and no other sheet may be showing.")
            finish(id, with: .failure(error), dismiss: false)
        }
    }

    /// Ends attempt `id` once: later calls for it (the completion handler after a cancellation, or
    /// the reverse) find nothing.
    private func finish(_ id: UInt64, with outcome: Result<URL, any Error>, dismiss: Bool) {
        guard let sheet = sheets.removeValue(forKey: id) else { return }
        if dismiss { sheet.session.cancel() }
        sheet.continuation.resume(with: outcome)
    }

    /// The session for `callback`: the callback initializer where the system has it, the custom
    /// scheme one before (which cannot catch an https redirect).
    private static func session(
        url: URL, callback: WebAuthenticationCallback,
        completion: @escaping ASWebAuthenticationSession.CompletionHandler
    ) throws(LatchkeyError) -> ASWebAuthenticationSession {
        if #available(iOS 17.4, macOS 14.4, visionOS 1.1, *) {
            return ASWebAuthenticationSession(url: url, callback: callback.apple, completionHandler: completion)
        }
        switch callback {
        case .customScheme(let scheme):
            return ASWebAuthenticationSession(url: url, callbackURLScheme: scheme, completionHandler: completion)
        case .https:
            throw WebAuthenticationCallback.httpsNeedsNewerSystem
        }
    }

    /// What the completion handler's arguments mean: the redirect, `user_cancelled` for a closed
    /// sheet, or the session's error as it is (the core keeps it as the underlying error).
    private nonisolated static func outcome(url: URL?, error: (any Error)?) -> Result<URL, any Error> {
        if let url { return .success(url) }
        if let error, let closed = LatchkeyError.closedSheet(error) { return .failure(closed) }
        return .failure(
            error ?? LatchkeyError(code: .invalidResponse, message: "The login sheet ended without a redirect."))
    }
}
#endif
