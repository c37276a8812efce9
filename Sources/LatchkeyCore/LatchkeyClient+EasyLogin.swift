import Foundation
import LatchkeyAPI

/// Easy Login: Facebook's dialog in a browser, no Facebook SDK in the app.
extension LatchkeyClient {
    /// Backendless's `easyLoginWithFacebookFieldsMapping:permissions:`: starts an attempt and returns
    /// the URL to open in a browser (or use ``signInWithEasyLogin(using:fieldsMapping:permissions:prefersEphemeral:)``).
    /// The person comes back through the redirect URI: pass that URL to `handleOpenURL(_:)`.
    /// - Parameters:
    ///   - fieldsMapping: Facebook field → user property; the server's default when `nil`.
    ///   - permissions: Facebook permissions beyond `public_profile`.
    ///   - redirectURI: overrides the configuration's (a desktop app's loopback port is only known now).
    public func easyLoginWithFacebook(
        fieldsMapping: [String: String]? = nil, permissions: [String] = [], redirectURI: String? = nil
    ) throws(LatchkeyError) -> URL {
        guard let clientID = configuration.oauthClientID, let redirect = redirectURI ?? configuration.redirectURI
        else {
            throw LatchkeyError.sdk(
                .easyLoginNotConfigured, "Set oauthClientID and redirectURI in LatchkeyConfiguration.")
        }
        let request = EasyLoginRequest(
            serverURL: configuration.serverURL, clientID: clientID, redirectURI: redirect, permissions: permissions,
            fieldsMapping: fieldsMapping)
        pendingEasyLogin = (request, beginSignIn())
        return request.url
    }

    /// Signs in with Easy Login through a web authentication session (the system sheet on Apple
    /// platforms, `EasyLoginPresenter`): opens the authorization URL, waits for the redirect to the
    /// configured `redirectURI`, and finishes the sign-in.
    /// - Throws: `user_cancelled` when the person closes the sheet; `cancelled` when the task was
    ///   cancelled; `invalid_configuration` for a redirect URI no web authentication session can
    ///   catch; otherwise what `handleOpenURL(_:)` throws.
    public func signInWithEasyLogin(
        using session: some WebAuthenticationSession, fieldsMapping: [String: String]? = nil,
        permissions: [String] = [], prefersEphemeral: Bool = false
    ) async throws(LatchkeyError) -> LatchkeyUser {
        guard let redirect = configuration.redirectURI, let callback = WebAuthenticationCallback(redirectURI: redirect)
        else {
            throw LatchkeyError.sdk(
                .invalidConfiguration,
                "Easy Login through a web authentication session needs a redirectURI with a custom scheme or https.")
        }
        let url = try easyLoginWithFacebook(fieldsMapping: fieldsMapping, permissions: permissions)
        let attempt = self.attempt
        let returned: URL
        do {
            returned = try await session.authenticate(url: url, callback: callback, prefersEphemeral: prefersEphemeral)
        } catch {
            // Adapters throw `user_cancelled` themselves; the rest is kept as the underlying error.
            let failure = LatchkeyError.wrapping(error, as: .invalidResponse, "The web authentication session failed.")
            if attempt == self.attempt { cancelEasyLogin() }
            throw failure
        }
        do {
            return try await handleOpenURL(returned)
        } catch LatchkeyError.Code.stateMismatch {
            // The sheet is closed: no other redirect will come for this attempt.
            if attempt == self.attempt { cancelEasyLogin() }
            throw LatchkeyError.sdk(.stateMismatch, "The login answer does not belong to this request.")
        }
    }

    /// Abandons the Easy Login in progress (the browser was closed, or failed): a late redirect is no
    /// longer accepted, and without a session the state becomes `closedLoginFailed` (a session kept
    /// through the attempt stays open).
    public func cancelEasyLogin() {
        guard pendingEasyLogin != nil else { return }
        pendingEasyLogin = nil
        attempt &+= 1
        if credentials == nil { move(to: .closedLoginFailed) }
    }

    /// Whether `url` is the redirect of the Easy Login in progress (for routing in `onOpenURL`).
    public func canHandleOpenURL(_ url: URL) -> Bool { pendingEasyLogin?.request.isRedirect(url) ?? false }

    /// Finishes Easy Login with the redirect URL: checks state and issuer, redeems the code with the
    /// PKCE verifier, stores the session and returns the user.
    /// - Throws: `user_cancelled` when the person cancelled on Facebook; `state_mismatch` for a URL
    ///   that does not belong to the attempt in progress; the server's codes otherwise.
    @discardableResult
    public func handleOpenURL(_ url: URL) async throws(LatchkeyError) -> LatchkeyUser {
        guard let (request, attempt) = pendingEasyLogin, request.isRedirect(url) else {
            throw LatchkeyError.sdk(.invalidResponse, "No Easy Login is waiting for this URL.")
        }
        let code: String
        do {
            code = try request.code(from: url, issuer: configuration.serverURL)
        } catch LatchkeyError.Code.stateMismatch {
            // A URL forged by someone else must not end the person's real attempt.
            throw LatchkeyError.sdk(.stateMismatch, "The login answer does not belong to this request.")
        } catch {
            pendingEasyLogin = nil
            throw failSignIn(attempt: attempt, error)
        }
        // The attempt is over whatever happens next: a code is redeemable once.
        pendingEasyLogin = nil
        do throws(LatchkeyError) {
            let session = try await transport.send(
                "POST", "v1/oauth/token",
                form: [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", request.redirectURI),
                    ("code_verifier", request.codeVerifier), ("client_id", request.clientID),
                ], as: SessionBody.self)
            let body: UserBody
            do throws(LatchkeyError) {
                body = try await transport.send("GET", "v1/users/me", bearer: session.accessToken, as: UserBody.self)
            } catch {
                // The code opened a session nobody will hold: end it on the server.
                revokeInBackground(session.accessToken)
                throw error
            }
            let user = LatchkeyUser(body)
            try await adoptSignIn(session, user: user, attempt: attempt)
            log(.info, "Signed in with Easy Login.")
            return user
        } catch {
            throw failSignIn(attempt: attempt, error)
        }
    }
}
