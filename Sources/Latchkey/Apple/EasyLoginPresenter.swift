#if canImport(AuthenticationServices)
import AuthenticationServices
import Foundation

/// Runs Easy Login in the system's web authentication sheet (`ASWebAuthenticationSession`): it
/// shares Safari's Facebook cookies, shows the server's address, and hands back the redirect
/// without the app declaring a URL scheme handler.
@MainActor
public final class EasyLoginPresenter: NSObject, ASWebAuthenticationPresentationContextProviding {
    private let anchor: ASPresentationAnchor
    private var session: ASWebAuthenticationSession?

    /// - Parameter anchor: the window the sheet is attached to.
    public init(anchor: ASPresentationAnchor) {
        self.anchor = anchor
    }

    /// Signs in with Facebook through the sheet and returns the user.
    /// - Parameters:
    ///   - client: configured with `oauthClientID` and a `redirectURI` whose scheme is `callbackScheme`.
    ///   - callbackScheme: the redirect URI's scheme, e.g. `myapp` for `myapp://auth`.
    ///   - prefersEphemeral: do not share cookies with Safari (the person types their password again).
    /// - Throws: `user_cancelled` when the sheet is closed, otherwise what `handleOpenURL` throws.
    public func signIn(
        client: LatchkeyClient, callbackScheme: String, fieldsMapping: [String: String]? = nil,
        permissions: [String] = [], prefersEphemeral: Bool = false
    ) async throws(LatchkeyError) -> LatchkeyUser {
        let url = try await client.easyLoginWithFacebook(fieldsMapping: fieldsMapping, permissions: permissions)
        let callback: URL
        do {
            callback = try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<URL, any Error>) in
                let session = ASWebAuthenticationSession(url: url, callbackURLScheme: callbackScheme) { url, error in
                    if let url {
                        continuation.resume(returning: url)
                    } else {
                        continuation.resume(
                            throwing: error ?? LatchkeyError.sdk(.userCancelled, "The login was cancelled."))
                    }
                }
                session.presentationContextProvider = self
                session.prefersEphemeralWebBrowserSession = prefersEphemeral
                self.session = session
                if !session.start() {
                    continuation.resume(
                        throwing: LatchkeyError.sdk(.invalidResponse, "The login sheet could not start."))
                }
            }
        } catch {
            session = nil
            await client.cancelEasyLogin()
            if let error = error as? ASWebAuthenticationSessionError, error.code == .canceledLogin {
                throw LatchkeyError.sdk(.userCancelled, "The login was cancelled.")
            }
            if let error = error as? LatchkeyError { throw error }
            throw LatchkeyError.sdk(.invalidResponse, "The login sheet failed: \(error.localizedDescription)")
        }
        session = nil
        return try await client.handleOpenURL(callback)
    }

    /// The window to attach the sheet to.
    public nonisolated func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
        MainActor.assumeIsolated { anchor }
    }
}
#endif
