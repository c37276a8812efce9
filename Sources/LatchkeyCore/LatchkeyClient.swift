import Foundation
import LatchkeyAPI

/// The app's entry point: exchanges Facebook or Sign in with Apple credentials for a Latchkey
/// session, keeps it fresh and persisted, and reports its state.
///
/// ```swift
/// let client = LatchkeyClient(configuration: .init(serverURL: url, facebookAppID: "123"))
/// let result = try await client.signIn(with: .accessToken(AccessToken.current!.tokenString))
/// ```
///
/// Every result belongs to the session it was started for. A sign-out ends the session at once:
/// in-flight refreshes are cancelled, and whatever they bring back later is dropped (the caller gets
/// `cancelled`) instead of bringing the old person back. A sign-in started while someone is signed
/// in leaves that session alone until it succeeds, then replaces it (revoking the old one on the
/// server); if it fails, the person is still signed in. `currentUser` is non-nil exactly in the
/// states `createdTokenLoaded`, `open` and `openTokenExtended`.
///
/// Create one client per process and credential store (see ``CredentialStore``).
public actor LatchkeyClient {
    let configuration: LatchkeyConfiguration
    let transport: JSONTransport
    /// The session's tokens.
    var credentials: StoredCredentials?
    var state: AuthState = .created
    /// Counts sessions: bumped whenever one ends or another replaces it. Session work (refreshes,
    /// user calls) remembers the epoch it started in and applies its result only if it is still
    /// current, so a late answer for Alice's session can never land in Bob's.
    var epoch: UInt64 = 0
    /// Counts sign-in attempts: bumped when one starts, is cancelled, or a sign-out happens. Only the
    /// latest attempt may open a session.
    var attempt: UInt64 = 0
    var refreshTask: Task<StoredCredentials, any Error>?
    /// The Easy Login attempt waiting for its redirect, and its attempt number.
    var pendingEasyLogin: (request: EasyLoginRequest, attempt: UInt64)?
    /// The last write of the pending Easy Login attempt to the store (kept in call order, like `lastWrite`).
    var lastEasyLoginWrite: Task<Void, Never>?
    /// Whether the store may hold a pending Easy Login attempt (unknown at launch), so attempts that
    /// never used Easy Login do not pay a store call to clear nothing.
    var mayHaveStoredEasyLogin: Bool
    private var observers: [UInt64: AsyncStream<AuthState>.Continuation] = [:]
    private var snapshotObservers: [UInt64: AsyncStream<SessionSnapshot>.Continuation] = [:]
    /// Bumped by each published snapshot (``SessionSnapshot/revision``).
    private var snapshotRevision: UInt64 = 0
    private var nextObserver: UInt64 = 0
    /// The last credential-store write; each write waits for the one before, so the store ends up
    /// as the calls were made (a sign-out's clear after the refresh's save, never before).
    private var lastWrite: Task<StoredCredentials?, Never>?
    /// The access token a refresh brought back after its session had ended here (not applied), and
    /// the refresh token it spent: sign-out uses it to reach the server.
    var rotatedAfterEnd: (spent: String, accessToken: String)?
    /// Whether this client has held a session (loaded or signed in) in its lifetime.
    var hadSession = false
    /// How many store writes were ever queued (to notice one queued during a read).
    private(set) var writesQueued: UInt64 = 0
    /// The store's last write failure, while no write has succeeded since (published in snapshots).
    private(set) var credentialStoreError: LatchkeyError?
    /// Whether this client's last store write failed: then the store does not hold what this client
    /// has, and a refresh must not read that as another client's sign-out.
    var lastStoreWriteFailed: Bool { credentialStoreError != nil }

    /// Creates a client; call `restoreSession()` at launch to pick up a stored session.
    public init(configuration: LatchkeyConfiguration) {
        self.configuration = configuration
        self.mayHaveStoredEasyLogin = configuration.credentialStore is any PendingEasyLoginStore
        self.transport = JSONTransport(baseURL: configuration.serverURL, transport: configuration.transport)
    }

    deinit {
        for observer in observers.values { observer.finish() }
        for observer in snapshotObservers.values { observer.finish() }
    }

    /// A new stream of states for one observer: it starts with the current state and then gets
    /// every change. Each call makes an independent stream; ending one (a SwiftUI `.task` that
    /// goes away) leaves the others running. A slow observer misses intermediate states, never
    /// the latest.
    public var authStates: AsyncStream<AuthState> { observe(state, into: &observers) }

    /// A new stream of snapshots (state and user together) for one observer: it starts with the
    /// current snapshot, then gets one whenever the state or the user changes. The pair is always
    /// one the client was in: never a state of one session with the user of another. Like
    /// ``authStates``, each call makes an independent stream, and a slow observer misses
    /// intermediate snapshots, never the latest. ``LatchkeySessionModel`` is built on it.
    public var sessionSnapshots: AsyncStream<SessionSnapshot> { observe(snapshot, into: &snapshotObservers) }

    /// A new observer's stream, starting with `current`, registered in `observers` until it ends.
    private func observe<Value: Sendable>(
        _ current: Value, into observers: inout [UInt64: AsyncStream<Value>.Continuation]
    ) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(16))
        let id = nextObserver
        nextObserver += 1
        continuation.yield(current)
        observers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(id) }
        }
        return stream
    }

    /// The current state and user.
    public var snapshot: SessionSnapshot {
        var current = SessionSnapshot(state: state, user: credentials?.user)
        current.credentialStoreError = credentialStoreError
        current.revision = snapshotRevision
        return current
    }

    /// The current state.
    public var authState: AuthState { state }

    /// The signed-in user, if any (also while a stored session waits to be refreshed: `createdTokenLoaded`).
    public var currentUser: LatchkeyUser? { credentials?.user }

    // MARK: Sign-in

    /// Exchanges a Facebook credential for a session (Firebase's `signIn(with:)`). A session already
    /// open stays usable until this one succeeds, then is replaced (and revoked on the server in the
    /// background); if this sign-in fails, the person is still signed in.
    /// - Parameter fieldsMapping: Facebook field → user property; the server's default when `nil`.
    /// - Throws: the server's codes; `cancelled` when a sign-out or another sign-in came first.
    @discardableResult
    public func signIn(
        with credential: FacebookCredential, fieldsMapping: [String: String]? = nil
    )
        async throws(LatchkeyError) -> SignInResult
    {
        try await exchange(at: "v1/auth/facebook", credential.request(fieldsMapping: fieldsMapping).json)
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
        // Signing out everywhere needs a valid access token. A refresh in flight may already have
        // spent the refresh token, so it is left to land (its result is not applied) and lends the
        // token it got; cancelling it could leave nothing to authenticate `logout-all` with.
        let inFlight = scope == .everywhere ? refreshTask : nil
        let ended = endLocally(clearingStore: false, reason: "Signed out.", cancellingRefresh: inFlight == nil)
        // The store is cleared of this session. A client that never had one (a sign-out before
        // `restoreSession()`, e.g. on the first launch after a reinstall, when the Keychain survived)
        // clears whatever session of this server the store holds, so none is left to restore. What
        // the store held may be newer than this client's copy (another client refreshed): revoke with that.
        guard ended != nil || !hadSession else { return }
        let stored = await persist(.clear(ended)).value
        let latest = [ended, stored].compactMap { $0 }.max { $0.refreshedAt < $1.refreshedAt }
        guard let latest else { return }
        if let inFlight { _ = try? await inFlight.value }
        defer { rotatedAfterEnd = nil }
        try await revoke(latest, scope: scope)
    }

    // MARK: Internals shared by the extensions

    /// Exchanges a provider's credential (`body`) at `path` for a session, as one sign-in attempt:
    /// every provider's sign-in opens, replaces and fails the same way. No bearer is sent: a guest
    /// keeps its account by linking (``link(with:fieldsMapping:)``), never by signing in.
    func exchange(at path: String, _ body: JSONValue) async throws(LatchkeyError) -> SignInResult {
        let attempt = beginSignIn()
        do {
            let answer = try await transport.send("POST", path, json: body, as: SignInBody.self)
            let user = LatchkeyUser(answer.user)
            try await adoptSignIn(answer.session, user: user, attempt: attempt)
            log(.info, "Signed in.")
            return SignInResult(
                user: user, isNewUser: answer.isNewUser, grantedPermissions: answer.grantedPermissions,
                declinedPermissions: answer.declinedPermissions)
        } catch {
            // A person with a second factor: the error carries what finishes this sign-in.
            throw failSignIn(
                attempt: attempt, error.resolving(with: self, purpose: .signIn, now: configuration.clock()))
        }
    }

    /// Starts a sign-in attempt, superseding any other. Without a session the state becomes
    /// `opening`; a session already open stays open (and usable) until the attempt succeeds.
    func beginSignIn() -> UInt64 {
        attempt &+= 1
        dropEasyLogin()
        if credentials == nil { startOver(to: .opening) }
        return attempt
    }

    /// What a failed sign-in throws. The latest attempt without a session moves to
    /// `closedLoginFailed`; a session kept through the attempt stays as it was.
    func failSignIn(attempt: UInt64, _ error: LatchkeyError) -> LatchkeyError {
        guard attempt == self.attempt else {
            return error.code == .cancelled ? error : .superseded
        }
        log(.warning, "The sign-in failed.", code: error.code)
        if credentials == nil { move(to: .closedLoginFailed) }
        return error
    }

    /// Opens the session a sign-in brought back, if its attempt is still the latest; the session it
    /// replaces (if any) is revoked on the server in the background. A dropped session is revoked too,
    /// so no sign-in leaves a live session nobody holds.
    func adoptSignIn(_ session: SessionBody, user: LatchkeyUser, attempt: UInt64) async throws(LatchkeyError) {
        guard attempt == self.attempt else {
            revokeInBackground(session.accessToken)
            throw .superseded
        }
        let replaced = credentials
        let opened = credentials(from: session, user: user)
        epoch &+= 1
        refreshTask?.cancel()
        refreshTask = nil
        credentials = opened
        hadSession = true
        // A replaced session, or an attempt that stopped blocking (an Easy Login redirect coming
        // back after the app returned without one): a new lifecycle.
        if replaced != nil || state != .opening { startOver(to: .opening) }
        move(to: .open)
        if let replaced { endInBackground(replaced, "A new sign-in replaced the session.") }
        // A stored session this client never loaded (a sign-in before the launch's restore
        // finished, or one another client saved) is overwritten: end it on the server too, so no
        // session is left alive that nobody holds.
        if let overwritten = await persist(.save(opened)).value,
            replaced.map({ !overwritten.isSameSession(as: $0) }) ?? true
        {
            endInBackground(overwritten, "A new sign-in replaced a stored session.")
        }
    }

    /// Ends a session this client replaced on the server, best effort (refreshing first if its
    /// access token expired, as `revoke` does).
    private func endInBackground(_ ended: StoredCredentials, _ reason: String) {
        log(.info, reason)
        Task { try? await self.revoke(ended, scope: .thisDevice) }
    }

    /// The stored form of a session the server just issued.
    func credentials(from session: SessionBody, user: LatchkeyUser) -> StoredCredentials {
        let now = configuration.clock()
        return StoredCredentials(
            accessToken: session.accessToken,
            accessTokenExpiresAt: now.addingTimeInterval(TimeInterval(session.expiresIn)),
            refreshToken: session.refreshToken, user: user, serverURL: configuration.serverURL, refreshedAt: now)
    }

    /// Ends the session here: a new epoch and attempt (in-flight work is dropped), the refresh
    /// cancelled, the Easy Login attempt dropped, and, with `clearingStore`, the store cleared if it
    /// still holds this session (another client may have stored a newer one). Returns the ended credentials.
    @discardableResult
    func endLocally(clearingStore: Bool, reason: String, cancellingRefresh: Bool = true) -> StoredCredentials? {
        let ended = credentials
        epoch &+= 1
        attempt &+= 1
        if cancellingRefresh { refreshTask?.cancel() }
        refreshTask = nil
        dropEasyLogin()
        credentials = nil
        if let ended, clearingStore { persist(.clear(ended)) }
        switch state {
        case .opening: move(to: .closedLoginFailed)
        case .open, .openTokenExtended, .createdTokenLoaded: move(to: .closed)
        // Whatever the store held is no longer wanted: nobody is signed in, and that is known now.
        case .storeUnreadable: startOver(to: .created)
        case .created, .closed, .closedLoginFailed: break
        }
        if ended != nil { log(.info, reason) }
        return ended
    }

    /// A new session lifecycle, as a new FBSession would start (`.created` itself is announced).
    func startOver(to next: AuthState) {
        guard next != .created else {
            if state != .created { announce(.created) }
            return
        }
        state = .created
        move(to: next)
    }

    func move(to next: AuthState) {
        guard state.canMove(to: next) else { return }
        announce(next)
    }

    private func announce(_ next: AuthState) {
        state = next
        for observer in observers.values { observer.yield(next) }
        publishSnapshot()
    }

    /// Hands the current snapshot to its observers: on every state change, and when the user
    /// changes within a state (a reload). Callers change `credentials` before moving, so each
    /// snapshot pairs a state with its own session's user.
    func publishSnapshot() {
        snapshotRevision &+= 1
        let current = snapshot
        for observer in snapshotObservers.values { observer.yield(current) }
    }

    func log(_ level: LatchkeyLogEvent.Level, _ message: String, code: LatchkeyError.Code? = nil) {
        configuration.log?(LatchkeyLogEvent(level: level, message: message, code: code))
    }

    /// Queues a store write behind the previous one; each runs under the store's exclusive access,
    /// so it never interleaves with another client's refresh. A failed write is logged, not thrown:
    /// the server has answered and the person is signed in (or out) either way. The task returns
    /// what the store held of the session the write replaced or cleared.
    @discardableResult
    func persist(_ write: StoreWrite) -> Task<StoredCredentials?, Never> {
        let previous = lastWrite
        let store = configuration.credentialStore
        let server = configuration.serverURL
        let task = Task { () -> StoredCredentials? in
            _ = await previous?.value
            do {
                let held = try await store.withExclusiveAccess { try await write.apply(to: store, server: server) }
                self.storeWriteFinished(failure: nil)
                return held
            } catch {
                self.storeWriteFinished(failure: error)
                return nil
            }
        }
        lastWrite = task
        writesQueued &+= 1
        return task
    }

    /// Remembers whether the last store write failed (then the store does not hold what this
    /// client has), logs a failure, and publishes it (``SessionSnapshot/credentialStoreError``)
    /// until a write succeeds.
    func storeWriteFinished(failure: (any Error)?) {
        let published = failure.map {
            LatchkeyError.sdk(
                .credentialStoreFailed, "The session could not be saved on this device; it will be saved again.",
                underlying: $0)
        }
        if let failure { log(.warning, "The credential store failed: \(failure)", code: .credentialStoreFailed) }
        if (published == nil) != (credentialStoreError == nil) {
            credentialStoreError = published
            publishSnapshot()
        }
    }

    /// Forgets a failed write of a session this client no longer holds (it adopted another
    /// client's): the store holds what this client has again.
    func forgetStoreWriteFailure() {
        credentialStoreError = nil
    }

    /// Saves `credentials` (``CredentialStore/saveRetrying(_:)``) and records the outcome.
    func save(_ credentials: StoredCredentials, to store: any CredentialStore) async {
        do {
            try await store.saveRetrying(credentials)
            storeWriteFinished(failure: nil)
        } catch {
            storeWriteFinished(failure: error)
        }
    }

    /// Waits for the store writes queued so far.
    func storeWritesSettled() async { _ = await lastWrite?.value }

    /// Ends a session nobody will hold (a dropped sign-in, an orphaned code) on the server, best effort.
    func revokeInBackground(_ accessToken: String) {
        Task { try? await self.transport.sendRaw("POST", "v1/auth/logout", json: [:], bearer: accessToken) }
    }

    private func removeObserver(_ id: UInt64) {
        observers[id] = nil
        snapshotObservers[id] = nil
    }

    /// Tells the server the session ended (`/v1/auth/logout` or `/logout-all`), refreshing first
    /// when the access token has expired, since logout needs a valid one.
    private func revoke(_ ended: StoredCredentials, scope: SignOutScope) async throws(LatchkeyError) {
        var accessToken = ended.accessToken
        do {
            if let rotated = rotatedAfterEnd, rotated.spent == ended.refreshToken {
                accessToken = rotated.accessToken
            } else if ended.accessTokenExpiresAt <= configuration.clock() {
                let session = try await transport.send(
                    "POST", "v1/oauth/token",
                    form: TokenRequest.refresh(refreshToken: ended.refreshToken).form,
                    as: SessionBody.self)
                accessToken = session.accessToken
            }
            let path = scope == .everywhere ? "v1/auth/logout-all" : "v1/auth/logout"
            try await transport.sendRaw("POST", path, json: [:], bearer: accessToken)
        } catch  where scope == .thisDevice && error.category == .reopenSession {
            // The server already considers this session over (revoked, or its refresh token spent
            // by a refresh the sign-out cancelled, which revokes it): that is what was asked.
        }
    }
}

/// A write to the credential store, applied under its exclusive access after re-reading it, so a
/// client never overwrites or clears what another client over the same store saved since.
enum StoreWrite: Sendable {
    /// A session this client just opened: replaces whatever is stored (and returns another session
    /// of this server it overwrote, which nobody holds any more).
    case save(StoredCredentials)
    /// The same session with a reloaded user: written only while the store holds that session, and
    /// onto its newest tokens (another client may have refreshed them).
    case update(StoredCredentials)
    /// This session ended: cleared only while the store holds it. `nil` (a client that never had a
    /// session signing out) clears whatever session of this server the store holds.
    case clear(StoredCredentials?)

    /// Applies the write for the client of `server`; returns what the store held of the session
    /// it updated or cleared.
    func apply(to store: any CredentialStore, server: URL) async throws -> StoredCredentials? {
        switch self {
        case .save(let credentials):
            // An unreadable store is no reason not to save; what it held is then unknown.
            let stored = try? await store.load()
            try await store.saveRetrying(credentials)
            guard let stored, stored.serverURL == server, !stored.isSameSession(as: credentials) else { return nil }
            return stored
        case .update(let credentials):
            guard let stored = try await store.load(), stored.isSameSession(as: credentials) else { return nil }
            var newest = stored.refreshedAt > credentials.refreshedAt ? stored : credentials
            newest.user = credentials.user
            try await store.saveRetrying(newest)
            return stored
        case .clear(let credentials):
            guard let stored = try await store.load(), stored.serverURL == server,
                credentials.map(stored.isSameSession(as:)) ?? true
            else { return nil }
            try await store.clearRetrying()
            return stored
        }
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
