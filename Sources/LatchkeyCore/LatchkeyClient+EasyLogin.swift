import Foundation
import LatchkeyAPI

/// Easy Login: Facebook's dialog in a browser, no Facebook SDK in the app.
extension LatchkeyClient {
    /// Starts an Easy Login attempt and returns the URL to open in a browser (or let
    /// ``signInWithEasyLogin(using:fieldsMapping:permissions:prefersEphemeral:)`` open it). The
    /// person comes back through the redirect URI: pass that URL to ``handleOpenURL(_:)``.
    ///
    /// The attempt (state and PKCE verifier) is kept in the credential store before the URL is
    /// returned, so an app the system kills while the person is in the browser can still finish it
    /// when the redirect launches it again.
    /// - Parameters:
    ///   - fieldsMapping: Facebook field → user property; the server's default when `nil`.
    ///   - permissions: Facebook permissions beyond `public_profile`.
    ///   - redirectURI: overrides the configuration's (a desktop app's loopback port is only known now).
    /// - Throws: `easy_login_not_configured` without `oauthClientID` and a redirect URI;
    ///   `superseded` when another sign-in or a sign-out started meanwhile.
    public func makeEasyLoginURL(
        fieldsMapping: [String: String]? = nil, permissions: [String] = [], redirectURI: String? = nil
    ) async throws(LatchkeyError) -> URL {
        try await startEasyLogin(try easyLoginRequest(fieldsMapping, permissions, redirectURI))
    }

    /// ``makeEasyLoginURL(fieldsMapping:permissions:redirectURI:)`` for linking: the Facebook
    /// identity the person signs in with on Facebook is added to the signed-in user (as
    /// ``link(with:fieldsMapping:)`` does) instead of signing in. ``handleOpenURL(_:)`` finishes it
    /// with the same user and a fresh session; a conflict throws
    /// ``LatchkeyError/Code/identityAlreadyLinked`` with its ``LatchkeyError/linkTicket``.
    /// - Throws: `not_signed_in` without a session; as ``makeEasyLoginURL(fieldsMapping:permissions:redirectURI:)``.
    public func makeEasyLoginLinkURL(
        fieldsMapping: [String: String]? = nil, permissions: [String] = [], redirectURI: String? = nil
    ) async throws(LatchkeyError) -> URL {
        let request = try easyLoginRequest(fieldsMapping, permissions, redirectURI)
        // The handle is asked for with the bearer, bound to this request's PKCE challenge: no bearer
        // token travels in the URL, and the handle links nothing without this app's verifier.
        let handle = try await authorized(
            "POST", "v1/users/me/identities/link-requests", json: ["codeChallenge": .string(request.codeChallenge)],
            as: LinkRequestBody.self
        ).0.linkRequest
        return try await startEasyLogin(request.linking(handle))
    }

    /// A fresh request for the configured client, or `easy_login_not_configured`.
    private func easyLoginRequest(
        _ fieldsMapping: [String: String]?, _ permissions: [String], _ redirectURI: String?
    ) throws(LatchkeyError) -> EasyLoginRequest {
        guard let clientID = configuration.oauthClientID, let redirect = redirectURI ?? configuration.redirectURI
        else {
            throw LatchkeyError.sdk(
                .easyLoginNotConfigured, "Set oauthClientID and redirectURI in LatchkeyConfiguration.")
        }
        return EasyLoginRequest(
            serverURL: configuration.serverURL, clientID: clientID, redirectURI: redirect, permissions: permissions,
            fieldsMapping: fieldsMapping)
    }

    /// Starts an attempt with `request`: kept in the store, then its URL returned.
    private func startEasyLogin(_ request: EasyLoginRequest) async throws(LatchkeyError) -> URL {
        // beginSignIn queues the clear of any attempt kept before, ahead of this save: should the
        // save fail, no superseded attempt stays in the store.
        let attempt = beginSignIn()
        pendingEasyLogin = (request, attempt)
        mayHaveStoredEasyLogin = true
        let pending = PendingEasyLogin(
            request: request, serverURL: configuration.serverURL, startedAt: configuration.clock())
        await persistEasyLogin(pending).value
        // Another sign-in or a sign-out during the write dropped this attempt (and queued its clear).
        guard attempt == self.attempt else { throw .superseded }
        return request.url
    }

    /// The former name of ``makeEasyLoginURL(fieldsMapping:permissions:redirectURI:)`` (Backendless's
    /// `easyLoginWithFacebookFieldsMapping:permissions:`), which did not say it only builds a URL.
    @available(*, deprecated, renamed: "makeEasyLoginURL(fieldsMapping:permissions:redirectURI:)")
    public func easyLoginWithFacebook(
        fieldsMapping: [String: String]? = nil, permissions: [String] = [], redirectURI: String? = nil
    ) async throws(LatchkeyError) -> URL {
        try await makeEasyLoginURL(fieldsMapping: fieldsMapping, permissions: permissions, redirectURI: redirectURI)
    }

    /// Signs in with Easy Login through a web authentication session (the system sheet on Apple
    /// platforms, `EasyLoginPresenter`): opens the authorization URL, waits for the redirect to the
    /// configured `redirectURI`, and finishes the sign-in.
    /// - Throws: `user_cancelled` when the person closes the sheet; `cancelled` when the task was
    ///   cancelled; `invalid_configuration` for a redirect URI no web authentication session can
    ///   catch; otherwise what `handleOpenURL(_:)` throws.
    public func signInWithEasyLogin(
        using session: some WebAuthenticator, fieldsMapping: [String: String]? = nil,
        permissions: [String] = [], prefersEphemeral: Bool = false
    ) async throws(LatchkeyError) -> LatchkeyUser {
        try await runEasyLogin(using: session, prefersEphemeral: prefersEphemeral) { () async throws(LatchkeyError) in
            try await self.makeEasyLoginURL(fieldsMapping: fieldsMapping, permissions: permissions)
        }
    }

    /// Links a Facebook identity to the signed-in user with Easy Login through a web
    /// authentication session (``makeEasyLoginLinkURL(fieldsMapping:permissions:redirectURI:)`` in
    /// the sheet): the user keeps its id, with the identity added and a fresh session.
    /// - Throws: ``LatchkeyError/Code/identityAlreadyLinked`` with a ``LatchkeyError/linkTicket``
    ///   when the identity is another account's; otherwise as
    ///   ``signInWithEasyLogin(using:fieldsMapping:permissions:prefersEphemeral:)``.
    @discardableResult
    public func linkWithEasyLogin(
        using session: some WebAuthenticator, fieldsMapping: [String: String]? = nil,
        permissions: [String] = [], prefersEphemeral: Bool = false
    ) async throws(LatchkeyError) -> LatchkeyUser {
        try await runEasyLogin(using: session, prefersEphemeral: prefersEphemeral) { () async throws(LatchkeyError) in
            try await self.makeEasyLoginLinkURL(fieldsMapping: fieldsMapping, permissions: permissions)
        }
    }

    /// Opens the URL `start` makes in `session` and finishes the attempt with its redirect.
    private func runEasyLogin(
        using session: some WebAuthenticator, prefersEphemeral: Bool,
        start: () async throws(LatchkeyError) -> URL
    ) async throws(LatchkeyError) -> LatchkeyUser {
        guard let redirect = configuration.redirectURI, let callback = WebAuthenticationCallback(redirectURI: redirect)
        else {
            throw LatchkeyError.sdk(
                .invalidConfiguration,
                "Easy Login through a web authentication session needs a redirectURI with a custom scheme or https.")
        }
        let url = try await start()
        let attempt = self.attempt
        let returned: URL
        do {
            returned = try await session.authenticate(url: url, callback: callback, prefersEphemeral: prefersEphemeral)
        } catch {
            // Adapters throw `user_cancelled` themselves; the rest is kept as the underlying error.
            let failure = LatchkeyError.wrapping(error, as: .invalidResponse, "The web authentication session failed.")
            if attempt == self.attempt { await cancelEasyLogin() }
            throw failure
        }
        do {
            return try await handleOpenURL(returned)
        } catch LatchkeyError.Code.stateMismatch {
            // The sheet is closed: no other redirect will come for this attempt.
            if attempt == self.attempt { await cancelEasyLogin() }
            throw LatchkeyError.sdk(.stateMismatch, "The login answer does not belong to this request.")
        }
    }

    /// Abandons the Easy Login in progress (the browser was closed, or failed): a late redirect is no
    /// longer accepted, and without a session the state becomes `closedLoginFailed` (a session kept
    /// through the attempt stays open).
    public func cancelEasyLogin() async {
        let inProgress = pendingEasyLogin != nil
        // After a relaunch the attempt may be only in the store: forget it there too.
        guard inProgress || mayHaveStoredEasyLogin else { return }
        dropEasyLogin()
        attempt &+= 1
        if inProgress, credentials == nil { move(to: .closedLoginFailed) }
        // Returns once the store forgot the attempt too (a CLI exits right after).
        _ = await lastEasyLoginWrite?.value
    }

    /// Stops an Easy Login opened in an outside browser (``makeEasyLoginURL(fieldsMapping:permissions:redirectURI:)``)
    /// from blocking the app: it came back to the foreground without the redirect, so the person
    /// may have abandoned the browser. Without a session the state leaves `opening` for
    /// `closedLoginFailed`, so a button offers sign-in again; the attempt itself is kept, and a
    /// redirect that still comes is finished by ``handleOpenURL(_:)`` until the attempt expires.
    /// A new sign-in, or ``cancelEasyLogin()``, ends it. Does nothing for any other state.
    public func stopWaitingForEasyLogin() {
        guard pendingEasyLogin != nil, credentials == nil, state == .opening else { return }
        log(.info, "Stopped waiting for the Easy Login redirect; the attempt stays open until it expires.")
        move(to: .closedLoginFailed)
    }

    /// Whether `url` is an Easy Login redirect this client may finish (for routing in `onOpenURL`):
    /// the redirect of the attempt in progress or, in an app relaunched before it used Easy Login, a
    /// redirect to the configured redirect URI (``handleOpenURL(_:)`` then reads the attempt from the
    /// credential store, and refuses a URL without its state).
    public func canHandleOpenURL(_ url: URL) -> Bool {
        if let pending = pendingEasyLogin { return pending.request.isRedirect(url) }
        guard mayHaveStoredEasyLogin, let redirect = configuration.redirectURI else { return false }
        return EasyLoginRequest.isRedirect(url, to: redirect)
    }

    /// Finishes Easy Login with the redirect URL: checks state and issuer, redeems the code with the
    /// PKCE verifier, stores the session and returns the user. After a relaunch (the app was killed
    /// while the person was in the browser) the attempt is read back from the credential store.
    /// - Throws: `user_cancelled` when the person cancelled on Facebook; `state_mismatch` for a URL
    ///   that does not belong to the attempt in progress; `no_pending_login` when no attempt waits
    ///   for this URL (none started, finished already, or older than an hour); the server's codes otherwise.
    @discardableResult
    public func handleOpenURL(_ url: URL) async throws(LatchkeyError) -> LatchkeyUser {
        var pending = pendingEasyLogin
        if pending == nil { pending = await resumeEasyLogin(for: url) }
        guard let (request, attempt) = pending, request.isRedirect(url) else {
            throw LatchkeyError.sdk(.noPendingLogin, "No Easy Login is waiting for this URL.")
        }
        let code: String
        do {
            code = try request.code(from: url, issuer: configuration.serverURL)
        } catch LatchkeyError.Code.stateMismatch {
            // A URL forged by someone else must not end the person's real attempt.
            throw LatchkeyError.sdk(.stateMismatch, "The login answer does not belong to this request.")
        } catch {
            await forgetEasyLogin(attempt)
            throw failSignIn(attempt: attempt, error)
        }
        // The attempt is over whatever happens next: a code is redeemable once. The store forgets
        // it before the code is spent, so no relaunch can try it again.
        await forgetEasyLogin(attempt)
        do throws(LatchkeyError) {
            let session = try await transport.send(
                "POST", "v1/oauth/token",
                form: TokenRequest.authorizationCode(
                    code: code, redirectURI: request.redirectURI, codeVerifier: request.codeVerifier,
                    clientID: request.clientID
                ).form, as: SessionBody.self)
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

    // MARK: The attempt kept in the store

    /// The attempt a relaunched app kept in the store, if `url` is its redirect and carries its
    /// state; it becomes the attempt in progress. A URL without its state changes nothing (someone
    /// else's link must not start or end anything).
    func resumeEasyLogin(for url: URL) async -> (request: EasyLoginRequest, attempt: UInt64)? {
        guard mayHaveStoredEasyLogin, let store = configuration.credentialStore as? any PendingEasyLoginStore else {
            return nil
        }
        let startAttempt = attempt
        _ = await lastEasyLoginWrite?.value
        let stored: PendingEasyLogin?
        do {
            stored = try await store.loadPendingEasyLogin()
        } catch {
            log(
                .warning, "The credential store failed to read the Easy Login attempt: \(error)",
                code: .credentialStoreFailed)
            return nil
        }
        // A sign-in, a sign-out, a cancel or the same redirect handled twice came first: what was
        // read may be spent or forgotten already. Joining an attempt another call took over would
        // redeem its code twice (the server then revokes the session), so this call stands down.
        guard attempt == startAttempt, mayHaveStoredEasyLogin, pendingEasyLogin == nil else { return nil }
        guard let stored else {
            mayHaveStoredEasyLogin = false
            return nil
        }
        guard stored.isUsable(at: configuration.clock(), server: configuration.serverURL) else {
            log(.info, "Forgot an Easy Login attempt that is too old to finish.")
            await persistEasyLogin(nil).value
            return nil
        }
        guard stored.request.isRedirect(url), stored.request.carriesState(url) else { return nil }
        let attempt = beginSignIn()
        pendingEasyLogin = (stored.request, attempt)
        log(.info, "Finishing an Easy Login started before the app was relaunched.")
        return (stored.request, attempt)
    }

    /// Forgets `attempt` when it is still the current one, and returns once the store did too.
    func forgetEasyLogin(_ attempt: UInt64) async {
        if attempt == self.attempt { dropEasyLogin() }
        _ = await lastEasyLoginWrite?.value
    }

    /// Forgets the Easy Login attempt here and in the store.
    func dropEasyLogin() {
        pendingEasyLogin = nil
        if mayHaveStoredEasyLogin { persistEasyLogin(nil) }
    }

    /// Keeps (`login`) or forgets (`nil`) the pending attempt in the store, after the writes before
    /// it. A failure is logged: Easy Login still works while the app stays alive.
    @discardableResult
    func persistEasyLogin(_ login: PendingEasyLogin?) -> Task<Void, Never> {
        let previous = lastEasyLoginWrite
        if login == nil { mayHaveStoredEasyLogin = false }
        guard let store = configuration.credentialStore as? any PendingEasyLoginStore else {
            mayHaveStoredEasyLogin = false
            return Task {}
        }
        let task = Task {
            _ = await previous?.value
            do {
                if let login {
                    try await store.savePendingEasyLogin(login)
                } else {
                    try await store.clearPendingEasyLogin()
                }
            } catch {
                self.log(
                    .warning, "The credential store failed to keep the Easy Login attempt: \(error)",
                    code: .credentialStoreFailed)
            }
        }
        lastEasyLoginWrite = task
        return task
    }
}
