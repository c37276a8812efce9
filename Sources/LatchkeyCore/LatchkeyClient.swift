import Foundation
import LatchkeyAPI

/// How a `LatchkeyClient` reaches its server and keeps its tokens.
public struct LatchkeyConfiguration: Sendable {
    /// The Latchkey server, e.g. `https://auth.example.com`.
    public var serverURL: URL
    /// The Facebook app id (for building Facebook login configurations and dialog URLs).
    public var facebookAppID: String
    /// Where tokens persist across launches.
    public var credentialStore: any CredentialStore
    /// Refresh this long before the access token expires.
    public var refreshLeeway: TimeInterval
    /// How requests reach the server (`URLSessionTransport` with `import Latchkey`).
    public var transport: any LatchkeyTransport
    /// The clock; tests inject one.
    public var clock: @Sendable () -> Date
    /// Easy Login: the app's OAuth client id on the server (`LATCHKEY_OAUTH_CLIENTS`).
    public var oauthClientID: String?
    /// Easy Login: where the server sends the person back, e.g. `myapp://auth` (a URL scheme the
    /// app declares) or a loopback URL on a desktop.
    public var redirectURI: String?

    /// Creates a configuration over any transport; `import Latchkey` adds one that takes a
    /// `URLSession` (by default `.shared`).
    public init(
        serverURL: URL, facebookAppID: String, credentialStore: any CredentialStore = InMemoryCredentialStore(),
        refreshLeeway: TimeInterval = 60, transport: any LatchkeyTransport,
        clock: @escaping @Sendable () -> Date = { Date() }, oauthClientID: String? = nil, redirectURI: String? = nil
    ) {
        self.oauthClientID = oauthClientID
        self.redirectURI = redirectURI
        self.serverURL = serverURL
        self.facebookAppID = facebookAppID
        self.credentialStore = credentialStore
        self.refreshLeeway = refreshLeeway
        self.transport = transport
        self.clock = clock
    }
}

/// The app's entry point: exchanges Facebook credentials for a Latchkey session, keeps it fresh and
/// persisted, and reports its state.
///
/// ```swift
/// let client = LatchkeyClient(configuration: .init(serverURL: url, facebookAppID: "123"))
/// let result = try await client.signIn(with: .accessToken(AccessToken.current!.tokenString))
/// ```
public actor LatchkeyClient {
    private let configuration: LatchkeyConfiguration
    private let transport: JSONTransport
    private var credentials: StoredCredentials?
    private var state: AuthState = .created
    private var refreshTask: Task<StoredCredentials, any Error>?
    private var pendingEasyLogin: EasyLoginRequest?
    private let stateStream: AsyncStream<AuthState>
    private let stateContinuation: AsyncStream<AuthState>.Continuation

    /// Creates a client; call `restoreSession()` at launch to pick up a stored session.
    public init(configuration: LatchkeyConfiguration) {
        self.configuration = configuration
        self.transport = JSONTransport(baseURL: configuration.serverURL, transport: configuration.transport)
        (stateStream, stateContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(16))
        stateContinuation.yield(.created)
    }

    /// Every state change, starting with the current state.
    public nonisolated var authStates: AsyncStream<AuthState> { stateStream }

    /// The current state.
    public var authState: AuthState { state }

    /// The signed-in user, if any.
    public var currentUser: LatchkeyUser? { credentials?.user }

    // MARK: Sign-in

    /// Exchanges a Facebook credential for a session (Firebase's `signIn(with:)`).
    /// - Parameter fieldsMapping: Facebook field → user property; the server's default when `nil`.
    public func signIn(
        with credential: FacebookCredential, fieldsMapping: [String: String]? = nil
    )
        async throws(LatchkeyError) -> SignInResult
    {
        startOver(to: .opening)
        var body: [String: JSONValue] = [:]
        switch credential.kind {
        case .accessToken(let token): body["accessToken"] = .string(token)
        case .limitedLogin(let idToken, let rawNonce):
            body["idToken"] = .string(idToken)
            if let rawNonce { body["nonce"] = .string(rawNonce) }
        }
        if let fieldsMapping { body["fieldsMapping"] = .object(fieldsMapping.mapValues(JSONValue.string)) }
        do {
            let answer = try await transport.send("POST", "v1/auth/facebook", json: .object(body), as: SignInBody.self)
            let user = LatchkeyUser(answer.user)
            try await adopt(answer.session, user: user)
            move(to: .open)
            return SignInResult(
                user: user, isNewUser: answer.isNewUser, grantedPermissions: answer.grantedPermissions,
                declinedPermissions: answer.declinedPermissions)
        } catch {
            move(to: .closedLoginFailed)
            throw error
        }
    }

    /// Backendless's `loginWithFacebook(accessToken:fieldsMapping:)`.
    public func loginWithFacebook(
        accessToken: String, fieldsMapping: [String: String]? = nil
    )
        async throws(LatchkeyError) -> LatchkeyUser
    {
        try await signIn(with: .accessToken(accessToken), fieldsMapping: fieldsMapping).user
    }

    // MARK: Easy Login

    /// Backendless's `easyLoginWithFacebookFieldsMapping:permissions:`: the URL to open in a browser
    /// (or `ASWebAuthenticationSession`, see `EasyLoginPresenter`); no Facebook SDK needed. The
    /// person comes back through the redirect URI: pass that URL to `handleOpenURL(_:)`.
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
                "easy_login_not_configured", "Set oauthClientID and redirectURI in LatchkeyConfiguration.")
        }
        let request = EasyLoginRequest(
            serverURL: configuration.serverURL, clientID: clientID, redirectURI: redirect, permissions: permissions,
            fieldsMapping: fieldsMapping)
        pendingEasyLogin = request
        startOver(to: .opening)
        return request.url
    }

    /// Abandons the Easy Login in progress (the browser was closed, or failed): the state becomes
    /// `closedLoginFailed` and a late redirect is no longer accepted.
    public func cancelEasyLogin() {
        guard pendingEasyLogin != nil else { return }
        pendingEasyLogin = nil
        move(to: .closedLoginFailed)
    }

    /// Whether `url` is the redirect of the Easy Login in progress (for routing in `onOpenURL`).
    public func canHandleOpenURL(_ url: URL) -> Bool { pendingEasyLogin?.isRedirect(url) ?? false }

    /// Finishes Easy Login with the redirect URL: checks state and issuer, redeems the code with the
    /// PKCE verifier, stores the session and returns the user.
    /// - Throws: `user_cancelled` when the person cancelled on Facebook; `state_mismatch` for a URL
    ///   that does not belong to the attempt in progress; the server's codes otherwise.
    @discardableResult
    public func handleOpenURL(_ url: URL) async throws(LatchkeyError) -> LatchkeyUser {
        guard let request = pendingEasyLogin, request.isRedirect(url) else {
            throw LatchkeyError.sdk("invalid_response", "No Easy Login is waiting for this URL.")
        }
        let code: String
        do {
            code = try request.code(from: url, issuer: configuration.serverURL)
        } catch  where error.code == "state_mismatch" {
            // A URL forged by someone else must not end the person's real attempt.
            throw error
        } catch {
            pendingEasyLogin = nil
            move(to: .closedLoginFailed)
            throw error
        }
        // The attempt is over whatever happens next: a code is redeemable once.
        pendingEasyLogin = nil
        do {
            let session = try await transport.send(
                "POST", "v1/oauth/token",
                form: [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", request.redirectURI),
                    ("code_verifier", request.codeVerifier), ("client_id", request.clientID),
                ], as: SessionBody.self)
            let body = try await transport.send(
                "GET", "v1/users/me", bearer: session.accessToken, as: UserBody.self)
            let user = LatchkeyUser(body)
            try await adopt(session, user: user)
            move(to: .open)
            return user
        } catch {
            move(to: .closedLoginFailed)
            throw error
        }
    }

    /// Loads a stored session at launch (`createdTokenLoaded`), refreshing it if it is stale.
    /// - Returns: whether a user is signed in afterwards.
    @discardableResult
    public func restoreSession() async -> Bool {
        guard state == .created else { return state.isOpen }
        guard let stored = try? await configuration.credentialStore.load(), stored.serverURL == configuration.serverURL
        else { return false }
        credentials = stored
        move(to: .createdTokenLoaded)
        do {
            _ = try await validAccessToken()
            move(to: .open)
            return true
        } catch {
            if error.category == .reopenSession { await endSession(revoke: false) }
            // A transient failure keeps the stored session for the next attempt.
            return false
        }
    }

    // MARK: Tokens

    /// An access token valid for at least `refreshLeeway`, refreshing if needed; concurrent callers
    /// share one refresh (a refresh token is single use, so two refreshes would end the session).
    public func validAccessToken() async throws(LatchkeyError) -> String {
        guard let current = credentials else { throw LatchkeyError.notSignedIn }
        if current.accessTokenExpiresAt.timeIntervalSince(configuration.clock()) > configuration.refreshLeeway {
            return current.accessToken
        }
        return try await refresh().accessToken
    }

    /// Forces a refresh now.
    @discardableResult
    public func refresh() async throws(LatchkeyError) -> StoredCredentials {
        if let refreshTask { return try await Self.value(of: refreshTask) }
        guard let current = credentials else { throw LatchkeyError.notSignedIn }
        let task = Task { () throws -> StoredCredentials in
            let session = try await self.transport.send(
                "POST", "v1/oauth/token",
                form: [("grant_type", "refresh_token"), ("refresh_token", current.refreshToken)],
                as: SessionBody.self)
            return try await self.adopt(session, user: current.user)
        }
        refreshTask = task
        defer { refreshTask = nil }
        do {
            let refreshed = try await Self.value(of: task)
            move(to: .openTokenExtended)
            return refreshed
        } catch {
            if error.category == .reopenSession { await endSession(revoke: false) }
            throw error
        }
    }

    // MARK: User

    /// Reloads the user from the server.
    public func reloadUser() async throws(LatchkeyError) -> LatchkeyUser {
        let body = try await authorized("GET", "v1/users/me", json: nil)
        let user = LatchkeyUser(body)
        credentials?.user = user
        if let credentials { try? await configuration.credentialStore.save(credentials) }
        return user
    }

    /// Changes properties the server lets users write (`null` removes).
    public func updateUser(properties: [String: JSONValue]) async throws(LatchkeyError) -> LatchkeyUser {
        let body = try await authorized("PATCH", "v1/users/me", json: ["properties": .object(properties)])
        let user = LatchkeyUser(body)
        credentials?.user = user
        if let credentials { try? await configuration.credentialStore.save(credentials) }
        return user
    }

    /// Signs out: revokes the session on the server (best effort) and clears the stored tokens.
    public func signOut() async {
        await endSession(revoke: true)
    }

    // MARK: Internals

    /// Calls an authenticated endpoint, refreshing once on a 401 (the token may have expired in flight).
    private func authorized(_ method: String, _ path: String, json: JSONValue?) async throws(LatchkeyError) -> UserBody
    {
        let token = try await validAccessToken()
        do {
            return try await transport.send(method, path, json: json, bearer: token, as: UserBody.self)
        } catch  where error.httpStatus == 401 && error.code == ErrorCode.unauthorized.rawValue {
            let fresh = try await refresh().accessToken
            return try await transport.send(method, path, json: json, bearer: fresh, as: UserBody.self)
        } catch {
            if error.category == .reopenSession { await endSession(revoke: false) }
            throw error
        }
    }

    @discardableResult
    private func adopt(_ session: SessionBody, user: LatchkeyUser) async throws(LatchkeyError) -> StoredCredentials {
        let now = configuration.clock()
        let stored = StoredCredentials(
            accessToken: session.accessToken,
            accessTokenExpiresAt: now.addingTimeInterval(TimeInterval(session.expiresIn)),
            refreshToken: session.refreshToken, user: user, serverURL: configuration.serverURL, refreshedAt: now)
        credentials = stored
        do {
            try await configuration.credentialStore.save(stored)
        } catch {
            throw LatchkeyError.sdk("credential_store_failed", "The session could not be saved: \(error)")
        }
        return stored
    }

    private func endSession(revoke: Bool) async {
        if revoke, let token = credentials?.accessToken {
            _ = try? await transport.sendRaw("POST", "v1/auth/logout", json: [:], bearer: token)
        }
        credentials = nil
        try? await configuration.credentialStore.clear()
        move(to: .closed)
    }

    /// A new sign-in starts a new session lifecycle, as a new FBSession would.
    private func startOver(to next: AuthState) {
        state = .created
        move(to: next)
    }

    private func move(to next: AuthState) {
        guard state.canMove(to: next) else { return }
        state = next
        stateContinuation.yield(next)
    }

    private static func value(
        of task: Task<StoredCredentials, any Error>
    ) async throws(LatchkeyError) -> StoredCredentials {
        do {
            return try await task.value
        } catch let error as LatchkeyError {
            throw error
        } catch {
            throw LatchkeyError.sdk("invalid_response", "\(error)")
        }
    }
}
