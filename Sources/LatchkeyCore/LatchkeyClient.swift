import Foundation
import LatchkeyAPI

/// The app's entry point: exchanges Facebook credentials for a Latchkey session, keeps it fresh and
/// persisted, and reports its state.
///
/// ```swift
/// let client = LatchkeyClient(configuration: .init(serverURL: url, facebookAppID: "123"))
/// let result = try await client.signIn(with: .accessToken(AccessToken.current!.tokenString))
/// ```
///
/// Every result belongs to the session it was started for. A sign-out, or a new sign-in, ends the
/// session at once: in-flight refreshes are cancelled, and whatever they bring back later is
/// dropped (the caller gets `not_signed_in`) instead of bringing the old person back.
/// `currentUser` is non-nil exactly in the states `createdTokenLoaded`, `open` and `openTokenExtended`.
///
/// Create one client per process and credential store (see ``CredentialStore``).
public actor LatchkeyClient {
    let configuration: LatchkeyConfiguration
    let transport: JSONTransport
    /// The session's tokens.
    var credentials: StoredCredentials?
    var state: AuthState = .created
    /// Counts sessions: bumped whenever one ends or a sign-in starts. Work remembers the epoch it
    /// started in and applies its result only if it is still current, so a late answer for Alice's
    /// session can never land in Bob's.
    var epoch: UInt64 = 0
    var refreshTask: Task<StoredCredentials, any Error>?
    var pendingEasyLogin: EasyLoginRequest?
    private var observers: [UInt64: AsyncStream<AuthState>.Continuation] = [:]
    private var nextObserver: UInt64 = 0
    /// The last credential-store write; each write waits for the one before, so the store ends up
    /// as the calls were made (a sign-out's clear after the refresh's save, never before).
    private var lastWrite: Task<Void, Never>?

    /// Creates a client; call `restoreSession()` at launch to pick up a stored session.
    public init(configuration: LatchkeyConfiguration) {
        self.configuration = configuration
        self.transport = JSONTransport(baseURL: configuration.serverURL, transport: configuration.transport)
    }

    deinit {
        for observer in observers.values { observer.finish() }
    }

    /// A new stream of states for one observer: it starts with the current state and then gets
    /// every change. Each call makes an independent stream; ending one (a SwiftUI `.task` that
    /// goes away) leaves the others running. A slow observer misses intermediate states, never
    /// the latest.
    public var authStates: AsyncStream<AuthState> {
        let (stream, continuation) = AsyncStream.makeStream(of: AuthState.self, bufferingPolicy: .bufferingNewest(16))
        let id = nextObserver
        nextObserver += 1
        continuation.yield(state)
        observers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(id) }
        }
        return stream
    }

    /// The current state.
    public var authState: AuthState { state }

    /// The signed-in user, if any (also while a stored session waits to be refreshed: `createdTokenLoaded`).
    public var currentUser: LatchkeyUser? { credentials?.user }

    // MARK: Sign-in

    /// Exchanges a Facebook credential for a session (Firebase's `signIn(with:)`). A session
    /// already open ends first (revoked on the server in the background).
    /// - Parameter fieldsMapping: Facebook field → user property; the server's default when `nil`.
    /// - Throws: the server's codes; `cancelled` when a sign-out or another sign-in came first.
    @discardableResult
    public func signIn(
        with credential: FacebookCredential, fieldsMapping: [String: String]? = nil
    )
        async throws(LatchkeyError) -> SignInResult
    {
        let epoch = beginSignIn()
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
            try await adopt(answer.session, user: user, epoch: epoch, moving: .open)
            log(.info, "Signed in.")
            return SignInResult(
                user: user, isNewUser: answer.isNewUser, grantedPermissions: answer.grantedPermissions,
                declinedPermissions: answer.declinedPermissions)
        } catch {
            throw failSignIn(epoch: epoch, error)
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

    /// A single-use nonce from the server (`POST /v1/auth/nonce`), for servers that require their
    /// own nonces (`LATCHKEY_REQUIRE_SERVER_NONCE`): pass `nonce.sha256` to Facebook's
    /// `LoginConfiguration` and `nonce.raw` to ``FacebookCredential/limitedLogin(idToken:rawNonce:)``
    /// before `expiresAt`.
    public func serverNonce() async throws(LatchkeyError) -> ServerNonce {
        let body = try await transport.send("POST", "v1/auth/nonce", json: [:], as: NonceBody.self)
        return ServerNonce(
            nonce: Nonce(raw: body.nonce),
            expiresAt: configuration.clock().addingTimeInterval(TimeInterval(body.expiresIn)))
    }

    // MARK: Sign-out

    /// Signs out on this device: the session ends here at once (store cleared, in-flight work
    /// dropped), then the server is asked to revoke it, best effort.
    public func signOut() async {
        try? await signOut(scope: .thisDevice)
    }

    /// Signs out this device, or every device of the user. The session always ends here first.
    /// - Throws: when the server could not be told (offline, or it failed): the person is signed
    ///   out on this device regardless, but for `.everywhere` other devices may still be signed in.
    public func signOut(scope: SignOutScope) async throws(LatchkeyError) {
        let ended = endLocally(clearingStore: true, reason: "Signed out.")
        await lastWrite?.value
        guard let ended else { return }
        try await revoke(ended, scope: scope)
    }

    // MARK: Internals shared by the extensions

    /// Starts a sign-in: ends the current session (revoking it in the background) and enters `opening`.
    func beginSignIn() -> UInt64 {
        if let ended = endLocally(clearingStore: true, reason: "A new sign-in replaces the session.") {
            Task { try? await self.revoke(ended, scope: .thisDevice) }
        }
        startOver(to: .opening)
        return epoch
    }

    /// What a failed sign-in throws, after moving to `closedLoginFailed` if it is still the current attempt.
    func failSignIn(epoch: UInt64, _ error: LatchkeyError) -> LatchkeyError {
        guard epoch == self.epoch else {
            return error.code == .cancelled ? error : .sdk(.cancelled, "A sign-out or another sign-in came first.")
        }
        log(.warning, "The sign-in failed.", code: error.code)
        move(to: .closedLoginFailed)
        return error
    }

    /// Makes `session` the current one if `epoch` is still current, moves to `next`, and persists it.
    @discardableResult
    func adopt(
        _ session: SessionBody, user: LatchkeyUser, epoch: UInt64, moving next: AuthState
    ) async throws(LatchkeyError) -> StoredCredentials {
        guard epoch == self.epoch else { throw .sdk(.cancelled, "A sign-out or another sign-in came first.") }
        let now = configuration.clock()
        let stored = StoredCredentials(
            accessToken: session.accessToken,
            accessTokenExpiresAt: now.addingTimeInterval(TimeInterval(session.expiresIn)),
            refreshToken: session.refreshToken, user: user, serverURL: configuration.serverURL, refreshedAt: now)
        credentials = stored
        move(to: next)
        await persist(stored).value
        return stored
    }

    /// Ends the session here: a new epoch, in-flight refreshes cancelled, the Easy Login attempt
    /// dropped, the store cleared (when this client had a session). Returns the ended credentials.
    @discardableResult
    func endLocally(clearingStore: Bool, reason: String) -> StoredCredentials? {
        let ended = credentials
        epoch &+= 1
        refreshTask?.cancel()
        refreshTask = nil
        pendingEasyLogin = nil
        credentials = nil
        if ended != nil && clearingStore { persist(nil) }
        switch state {
        case .opening: move(to: .closedLoginFailed)
        case .open, .openTokenExtended, .createdTokenLoaded: move(to: .closed)
        case .created, .closed, .closedLoginFailed: break
        }
        if ended != nil { log(.info, reason) }
        return ended
    }

    /// A new session lifecycle, as a new FBSession would start.
    func startOver(to next: AuthState) {
        state = .created
        move(to: next)
    }

    func move(to next: AuthState) {
        guard state.canMove(to: next) else { return }
        state = next
        for observer in observers.values { observer.yield(next) }
    }

    func log(_ level: LatchkeyLogEvent.Level, _ message: String, code: LatchkeyError.Code? = nil) {
        configuration.log?(LatchkeyLogEvent(level: level, message: message, code: code))
    }

    /// Queues a write (`nil` clears) behind the previous one. A failed write is logged, not thrown:
    /// the server has answered and the person is signed in (or out) either way.
    @discardableResult
    func persist(_ credentials: StoredCredentials?) -> Task<Void, Never> {
        let previous = lastWrite
        let store = configuration.credentialStore
        let log = configuration.log
        let write = Task {
            await previous?.value
            do {
                if let credentials { try await store.save(credentials) } else { try await store.clear() }
            } catch {
                log?(
                    LatchkeyLogEvent(
                        level: .warning, message: "The credential store failed: \(error)", code: .credentialStoreFailed)
                )
            }
        }
        lastWrite = write
        return write
    }

    private func removeObserver(_ id: UInt64) {
        observers[id] = nil
    }

    /// Tells the server the session ended (`/v1/auth/logout` or `/logout-all`), refreshing first
    /// when the access token has expired, since logout needs a valid one.
    private func revoke(_ ended: StoredCredentials, scope: SignOutScope) async throws(LatchkeyError) {
        var accessToken = ended.accessToken
        if ended.accessTokenExpiresAt <= configuration.clock() {
            let session = try await transport.send(
                "POST", "v1/oauth/token",
                form: [("grant_type", "refresh_token"), ("refresh_token", ended.refreshToken)], as: SessionBody.self)
            accessToken = session.accessToken
        }
        let path = scope == .everywhere ? "v1/auth/logout-all" : "v1/auth/logout"
        try await transport.sendRaw("POST", path, json: [:], bearer: accessToken)
    }
}

/// Which sessions ``LatchkeyClient/signOut(scope:)`` ends.
public enum SignOutScope: Sendable, Equatable {
    /// This device's session (`POST /v1/auth/logout`).
    case thisDevice
    /// Every session of the user, on every device (`POST /v1/auth/logout-all`).
    case everywhere
}

/// A nonce issued by the server (``LatchkeyClient/serverNonce()``).
public struct ServerNonce: Sendable, Equatable {
    /// The nonce: `sha256` for Facebook, `raw` for the sign-in.
    public let nonce: Nonce
    /// When the server stops accepting it.
    public let expiresAt: Date

    /// Creates a server nonce (the client makes these; public for tests).
    public init(nonce: Nonce, expiresAt: Date) {
        self.nonce = nonce
        self.expiresAt = expiresAt
    }
}
