// Only `import Latchkey`, with MemberImportVisibility on for this target: everything an app
// needs (JSONValue, the error codes, the answer types) must come with the SDK's one module.
import Foundation
import Latchkey
import Synchronization
import Testing

/// A transport an app's own tests can write in a few lines: every request is answered by a closure.
struct ScriptedTransport: LatchkeyTransport {
    let answer: @Sendable (LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse

    func send(_ request: LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse { try await answer(request) }

    /// Answers every sign-in with a fresh session for `userID`.
    static func signingIn(_ userID: String) -> ScriptedTransport {
        ScriptedTransport { request in
            let session = SessionBody(
                accessToken: "access-secret-\(userID)", expiresIn: 900, refreshToken: "refresh-secret-\(userID)",
                refreshTokenExpiresIn: 86400)
            let user = UserBody(id: userID, properties: ["name": "Test Person"], identities: [], createdAt: 0)
            switch request.url.path {
            case "/v1/oauth/token": return LatchkeyHTTPResponse(status: 200, body: try JSONEncoder().encode(session))
            case "/v1/users/me": return LatchkeyHTTPResponse(status: 200, body: try JSONEncoder().encode(user))
            default: break
            }
            let body = SignInBody(
                user: user,
                isNewUser: true, grantedPermissions: ["public_profile"], declinedPermissions: [], session: session)
            return LatchkeyHTTPResponse(status: 200, body: try JSONEncoder().encode(body))
        }
    }
}

/// Collects log events as the hook delivers them (synchronously, from the client's actor).
final class LogBook: Sendable {
    private let recorded = Mutex<[LatchkeyLogEvent]>([])
    var events: [LatchkeyLogEvent] { recorded.withLock { $0 } }
    func add(_ event: LatchkeyLogEvent) { recorded.withLock { $0.append(event) } }
}

/// A keychain stand-in that counts how items are written.
actor MemoryItems: SecureItemStore {
    private(set) var items: [String: Data] = [:]
    /// Deletes of the session's item (not of the pending Easy Login item beside it).
    private(set) var deletes = 0
    func read(account: String) -> Data? { items[account] }
    func write(_ data: Data, account: String) { items[account] = data }
    func delete(account: String) {
        if account == "session" { deletes += 1 }
        items[account] = nil
    }
    func corrupt(account: String) { items[account] = Data("not json".utf8) }
}

/// A store whose clear waits until the test lets it finish (a slow Keychain write).
actor SlowClearStore: CredentialStore {
    private var credentials: StoredCredentials?
    private var clearing: CheckedContinuation<Void, Never>?
    private var clearStartedWatchers: [CheckedContinuation<Void, Never>] = []
    func load() -> StoredCredentials? { credentials }
    func save(_ credentials: StoredCredentials) { self.credentials = credentials }
    func clear() async {
        for watcher in clearStartedWatchers { watcher.resume() }
        clearStartedWatchers = []
        await withCheckedContinuation { clearing = $0 }
        credentials = nil
    }
    /// Returns once a clear has started.
    func waitUntilClearing() async {
        if clearing != nil { return }
        await withCheckedContinuation { clearStartedWatchers.append($0) }
    }
    func finishClear() { clearing?.resume() }
}

/// A store in memory whose next load or save can be held until the test releases it (a slow
/// Keychain), to tell store races step by step.
actor GatedStore: CredentialStore {
    enum Operation: Hashable { case load, save }
    private var credentials: StoredCredentials?
    private var holds: Set<Operation> = []
    private var parked: [Operation: CheckedContinuation<Void, Never>] = [:]
    private var watchers: [Operation: [CheckedContinuation<Void, Never>]] = [:]

    func load() async -> StoredCredentials? {
        await park(.load)
        return credentials
    }
    func save(_ credentials: StoredCredentials) async {
        await park(.save)
        self.credentials = credentials
    }
    private var cleared = false
    private var clearWatchers: [CheckedContinuation<Void, Never>] = []
    func clear() {
        credentials = nil
        cleared = true
        for watcher in clearWatchers { watcher.resume() }
        clearWatchers = []
    }
    /// Returns once `clear()` has run (a sign-out reached the store).
    func waitUntilCleared() async {
        if cleared { return }
        await withCheckedContinuation { clearWatchers.append($0) }
    }
    /// The stored value, read without any gate.
    var current: StoredCredentials? { credentials }

    func hold(_ operation: Operation) { holds.insert(operation) }
    func waitUntilHeld(_ operation: Operation) async {
        if parked[operation] != nil { return }
        await withCheckedContinuation { watchers[operation, default: []].append($0) }
    }
    func release(_ operation: Operation) {
        parked.removeValue(forKey: operation)?.resume()
    }
    private func park(_ operation: Operation) async {
        guard holds.remove(operation) != nil else { return }
        await withCheckedContinuation { continuation in
            parked[operation] = continuation
            for watcher in watchers.removeValue(forKey: operation) ?? [] { watcher.resume() }
        }
    }
}

/// A sheet that hands back a fixed URL.
struct ReturningSheet: WebAuthenticator {
    let url: URL
    func authenticate(url: URL, callback: WebAuthenticationCallback, prefersEphemeral: Bool) async throws -> URL {
        self.url
    }
}

@Suite("The SDK as an app sees it")
struct AppFacingAPITests {
    static let server = URL(string: "https://auth.example.com")!

    static func client(
        _ transport: some LatchkeyTransport, store: any CredentialStore = InMemoryCredentialStore(),
        log: (@Sendable (LatchkeyLogEvent) -> Void)? = nil
    ) -> LatchkeyClient {
        LatchkeyClient(
            configuration: LatchkeyConfiguration(
                serverURL: server, facebookAppID: "1", credentialStore: store, transport: transport,
                oauthClientID: "ios", redirectURI: "myapp://auth", log: log))
    }

    @Test("error codes are named constants that work as catch patterns, typed and untyped")
    func catchPatterns() async {
        func typed() throws(LatchkeyError) { throw LatchkeyError(code: .userCancelled, message: "closed") }
        func untyped() throws { throw LatchkeyError(code: .sessionRevoked, message: "revoked", httpStatus: 401) }
        var matched: [String] = []
        do throws(LatchkeyError) {
            try typed()
        } catch LatchkeyError.Code.stateMismatch {
            matched.append("wrong")
        } catch LatchkeyError.Code.userCancelled {
            matched.append("typed")
        } catch {
            matched.append("fallthrough")
        }
        do {
            try untyped()
        } catch LatchkeyError.Code.sessionRevoked {
            matched.append("untyped")
        } catch {
            matched.append("fallthrough")
        }
        #expect(matched == ["typed", "untyped"])
        #expect(LatchkeyError(code: "user_cancelled", message: "").code == .userCancelled)
    }

    /// Getting Started's "Handle errors" function, as written there.
    static func signIn(accessToken: String, client: LatchkeyClient) async -> String? {
        do {
            try await client.signIn(with: .accessToken(accessToken))
            return nil
        } catch LatchkeyError.Code.userCancelled {
            return nil  // nothing to show
        } catch  where error.shouldNotifyUser {
            return error.localizedDescription  // the person's message
        } catch {
            return nil  // log it; nothing the person can act on
        }
    }

    @Test("the Getting Started snippet compiles as written: the do block's error type is inferred")
    func gettingStartedSnippet() async {
        let client = Self.client(ScriptedTransport { _ in throw POSIXError(.ENETUNREACH) })
        #expect(
            await Self.signIn(accessToken: "EAA", client: client)
                == "The server could not be reached. Check your connection and try again.")
    }

    @Test("localizedDescription says what happened, for the person when they need to know")
    func localizedDescriptions() {
        let revoked: any Error = LatchkeyError(code: .sessionRevoked, message: "The session was revoked.")
        #expect(revoked.localizedDescription == "Your session has ended. Please log in again.")
        let bug: any Error = LatchkeyError(code: .invalidRequest, message: "fieldsMapping is malformed.")
        #expect(bug.localizedDescription == "fieldsMapping is malformed.")
        #expect(!bug.localizedDescription.contains("could not be completed"))
    }

    @Test("a cancelled task is `cancelled`, not a network failure to show; the underlying error is kept")
    func cancellation() async {
        let client = Self.client(ScriptedTransport { _ in throw CancellationError() })
        do {
            _ = try await client.signIn(with: .accessToken("EAA"))
            Issue.record("the sign-in must fail")
        } catch {
            #expect(error.code == .cancelled && error.category == .cancelled && !error.shouldNotifyUser)
            #expect(error.underlying is CancellationError)
        }
        let offline = Self.client(ScriptedTransport { _ in throw POSIXError(.ENETUNREACH) })
        do {
            _ = try await offline.signIn(with: .accessToken("EAA"))
        } catch {
            #expect(error.code == .networkUnavailable && error.category == .transient && error.shouldNotifyUser)
            #expect((error.underlying as? POSIXError)?.code == .ENETUNREACH)
        }
    }

    @Test("app code that uses the SDK is testable with public initializers and a scripted transport")
    func testableFromAnApp() async throws {
        let book = LogBook()
        let client = Self.client(ScriptedTransport.signingIn("u-1"), log: { book.add($0) })
        let result = try await client.signIn(with: .accessToken("EAA"))
        #expect(result == SignInResult(user: result.user, isNewUser: true, grantedPermissions: ["public_profile"]))
        #expect(result.user.properties["name"] == JSONValue.string("Test Person"))
        #expect(await client.currentUser?.id == "u-1")
        let madeByHand = LatchkeyUser(id: "u-2", properties: ["name": "Someone"])
        #expect(madeByHand.string("name") == "Someone")
        await client.signOut()
        let events = book.events
        #expect(events.map(\.message).contains("Signed in."))
        #expect(events.allSatisfy { !$0.description.contains("secret") })
        #expect(LatchkeyLogEvent.Level.debug < .info && LatchkeyLogEvent.Level.info < .warning)
    }

    @Test("the Keychain-style store updates its one item in place and drops an unreadable one")
    func secureItemStore() async throws {
        let items = MemoryItems()
        let store = SecureItemCredentialStore(items: items, account: "session")
        let client = Self.client(ScriptedTransport.signingIn("u-1"), store: store)
        _ = try await client.signIn(with: .accessToken("EAA"))
        _ = try await client.refresh()
        _ = try await client.reloadUser()
        #expect(await items.deletes == 0)  // saves write over the item, never delete and re-add it
        #expect(try await store.load()?.user.id == "u-1")
        await items.corrupt(account: "session")
        #expect(try await store.load() == nil)
        #expect(await items.items.isEmpty)
    }

    @Test(
        "the web authentication callback comes from the redirect URI",
        arguments: [
            ("myapp://auth", WebAuthenticationCallback.customScheme("myapp")),
            ("MyApp://auth", .customScheme("myapp")),
            ("https://app.example.com/auth/done", .https(host: "app.example.com", path: "/auth/done")),
            ("https://app.example.com", .https(host: "app.example.com", path: "/")),
        ])
    func callbacks(redirect: String, expected: WebAuthenticationCallback) {
        #expect(WebAuthenticationCallback(redirectURI: redirect) == expected)
    }

    @Test("loopback and malformed redirect URIs have no web authentication callback")
    func noCallback() {
        #expect(WebAuthenticationCallback(redirectURI: "http://127.0.0.1:8123/callback") == nil)
        #expect(WebAuthenticationCallback(redirectURI: "not a url") == nil)
    }

    /// A sheet that fails as told.
    struct FailingSheet: WebAuthenticator {
        let error: any Error
        func authenticate(url: URL, callback: WebAuthenticationCallback, prefersEphemeral: Bool) async throws -> URL {
            throw error
        }
    }

    @Test("closing the sheet is userCancelled, cancelling the task is cancelled; both end the attempt")
    func sheetFailures() async {
        for (error, code) in [
            (LatchkeyError(code: .userCancelled, message: "closed") as any Error, LatchkeyError.Code.userCancelled),
            (CancellationError(), .cancelled),
        ] {
            let client = Self.client(ScriptedTransport.signingIn("u-1"))
            do {
                _ = try await client.signInWithEasyLogin(using: FailingSheet(error: error))
                Issue.record("the sign-in must fail")
            } catch {
                #expect(error.code == code)
            }
            #expect(await client.authState == .closedLoginFailed)
            #expect(await !client.canHandleOpenURL(URL(string: "myapp://auth?code=x&state=y")!))
        }
    }

    @Test("restoring while the sign-out's store clear is still under way does not bring the person back")
    func restoreWaitsForSignOut() async throws {
        let store = SlowClearStore()
        let client = Self.client(ScriptedTransport.signingIn("u-1"), store: store)
        try await client.signIn(with: .accessToken("EAA"))
        let signingOut = Task { await client.signOut() }
        await store.waitUntilClearing()
        let restoring = Task { await client.restoreSession() }
        await store.finishClear()
        #expect(await !restoring.value)
        await signingOut.value
        #expect(await client.currentUser == nil)
        #expect(await client.authState == .closed)
    }

    @Test("closing the Easy Login sheet while signed in keeps the person signed in")
    func cancelledEasyLoginKeepsSession() async throws {
        let client = Self.client(ScriptedTransport.signingIn("u-1"))
        try await client.signIn(with: .accessToken("EAA"))
        let code = await Self.code {
            _ = try await client.signInWithEasyLogin(
                using: FailingSheet(error: LatchkeyError(code: .userCancelled, message: "closed")))
        }
        #expect(code == .userCancelled)
        #expect(await client.currentUser?.id == "u-1")
        #expect(await client.authState == .open)
    }

    @Test("a sheet that hands back a redirect of another attempt ends this one instead of leaving it open")
    func foreignRedirectFromSheet() async {
        let client = Self.client(ScriptedTransport.signingIn("u-1"))
        let code = await Self.code {
            _ = try await client.signInWithEasyLogin(
                using: ReturningSheet(url: URL(string: "myapp://auth?code=x&state=forged")!))
        }
        #expect(code == .stateMismatch)
        #expect(await client.authState == .closedLoginFailed)
    }

    @Test("printing credentials or an Easy Login request never shows a token, the state or the verifier")
    func redactedDescriptions() async throws {
        let client = Self.client(ScriptedTransport.signingIn("u-1"))
        try await client.signIn(with: .accessToken("EAA"))
        let credentials = try await client.refresh()
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in ["\(credentials)", String(reflecting: credentials), dumped] {
            #expect(!text.contains("secret") && text.contains("u-1"))
        }
        let request = EasyLoginRequest(serverURL: Self.server, clientID: "ios", redirectURI: "myapp://auth")
        var dumpedRequest = ""
        dump(request, to: &dumpedRequest)
        for text in ["\(request)", String(reflecting: request), dumpedRequest] {
            #expect(!text.contains(request.codeVerifier) && !text.contains(request.state))
        }
    }

    /// The code `work` fails with, `nil` when it succeeds.
    static func code(_ work: () async throws -> Void) async -> LatchkeyError.Code? {
        do {
            try await work()
            return nil
        } catch let error as LatchkeyError {
            return error.code
        } catch {
            return "unexpected"
        }
    }

    @Test("a sign-out while a restore is reading the store wins: the read session is not restored")
    func signOutDuringRestoreRead() async throws {
        let store = GatedStore()
        try await Self.client(ScriptedTransport.signingIn("u-1"), store: store).signIn(with: .accessToken("EAA"))
        let relaunched = Self.client(ScriptedTransport.signingIn("u-1"), store: store)
        await store.hold(.load)
        let restoring = Task { await relaunched.restoreSession() }
        await store.waitUntilHeld(.load)
        let signingOut = Task { await relaunched.signOut() }
        // Released only once the sign-out has ended the session and reached the store: otherwise
        // the restore could finish first, and the test would be about scheduling, not the race.
        await store.waitUntilCleared()
        await store.release(.load)
        #expect(await !restoring.value)
        await signingOut.value
        #expect(await relaunched.currentUser == nil)
        #expect(await store.current == nil)
    }

    @Test("a refresh whose save is still under way when the session ends returns cancelled, not its tokens")
    func refreshEndedDuringSave() async throws {
        let store = GatedStore()
        let client = Self.client(ScriptedTransport.signingIn("u-1"), store: store)
        try await client.signIn(with: .accessToken("EAA"))
        await store.hold(.save)
        let refreshing = Task { try await client.refresh() }
        await store.waitUntilHeld(.save)
        let signingOut = Task { await client.signOut() }
        await store.release(.save)
        #expect(await Self.code { _ = try await refreshing.value } == .cancelled)
        await signingOut.value
        #expect(await !client.restoreSession())  // also waits for the client's queued store writes
        #expect(await store.current == nil)
    }

    @Test("two sessions of one user without session ids are never taken for one")
    func sameUserTwoSessions() async throws {
        let store = InMemoryCredentialStore()
        let counter = Counter()
        // Every answer carries new tokens, as a server opening a new session would.
        let transport = ScriptedTransport { request in
            let n = await counter.next()
            let session = SessionBody(
                accessToken: "access-\(n)", expiresIn: 900, refreshToken: "refresh-\(n)", refreshTokenExpiresIn: 86400)
            let user = UserBody(id: "u-1", properties: [:], identities: [], createdAt: 0)
            let body = SignInBody(
                user: user, isNewUser: false, grantedPermissions: [], declinedPermissions: [], session: session)
            return LatchkeyHTTPResponse(status: 200, body: try JSONEncoder().encode(body))
        }
        let first = Self.client(transport, store: store)
        try await first.signIn(with: .accessToken("EAA"))
        let second = Self.client(transport, store: store)
        try await second.signIn(with: .accessToken("EAA"))  // the same person, a second session
        await first.signOut()
        #expect(await store.load()?.refreshToken == "refresh-2")  // the second session stays stored
        #expect(await second.authState == .open)
    }
}

/// Hands out 1, 2, 3, …
actor Counter {
    private var value = 0
    func next() -> Int {
        value += 1
        return value
    }
}

/// What an app writes to link a guest and handle a conflict, with `import Latchkey` alone.
@Suite("App-facing API: identities")
struct AppFacingIdentityTests {
    @Test("a conflict's ticket reaches the app's catch, and completing it answers the merged id")
    func conflictTicket() async throws {
        let transport = ScriptedTransport { request in
            let user = UserBody(id: "kept", properties: [:], identities: [], createdAt: 0, isAnonymous: false)
            switch request.url.path {
            case "/v1/users/me/identities":
                let error = ErrorBody(code: .identityAlreadyLinked, message: "taken", linkTicket: "ticket-1")
                return LatchkeyHTTPResponse(status: 409, body: try JSONEncoder().encode(error))
            case "/v1/users/me/identities/complete":
                let body = LinkCompletionBody(user: user, mergedUserID: "gone")
                return LatchkeyHTTPResponse(status: 200, body: try JSONEncoder().encode(body))
            default:
                return try await ScriptedTransport.signingIn("kept").answer(request)
            }
        }
        let client = AppFacingAPITests.client(transport)
        try await client.signIn(with: .accessToken("EAA"))
        var ticket: String?
        do {
            try await client.link(with: .accessToken("EAB"))
        } catch {
            // `catch where` on this typed error crashes Swift 6.3's ownership checker here.
            if error.code == .identityAlreadyLinked { ticket = error.linkTicket }
        }
        let merged = try await client.completeLink(ticket: try #require(ticket))
        #expect(merged.mergedUserID == "gone" && merged.user.id == "kept" && !merged.user.isAnonymous)
    }
}

/// What an app writes for Sign in with Apple with `import Latchkey` alone: its own provider (as on a
/// platform without AuthenticationServices), its own controller's credential, and an Apple link.
@Suite("App-facing API: Sign in with Apple")
struct AppFacingAppleTests {
    /// An app's provider that answers with a credential Apple would give.
    struct AppProvider: AppleSignInProvider {
        func signIn(nonceSHA256: String, scopes: Set<AppleScope>) async throws -> AppleSignInResult {
            .authorized(AppleIDCredential(identityToken: "id.token.sig", authorizationCode: "code", user: "001.a.1"))
        }
    }

    @Test("signing in, signing in with the app's own credential, linking, and the method for the model")
    func apple() async throws {
        let client = AppFacingAPITests.client(
            ScriptedTransport { request in
                switch request.url.path {
                case "/v1/users/me/identities":
                    let user = UserBody(id: "u", properties: [:], identities: [], createdAt: 0)
                    return LatchkeyHTTPResponse(status: 200, body: try JSONEncoder().encode(UserAnswerBody(user: user)))
                default: return try await ScriptedTransport.signingIn("u").answer(request)
                }
            })
        try await client.signInWithApple(using: AppProvider(), scopes: [.email])
        let nonce = Nonce()
        let credential = AppleIDCredential(
            identityToken: "id.token.sig", authorizationCode: "code", user: "001.a.1", givenName: "Ada")
        try await client.signIn(with: credential, rawNonce: nonce.raw)
        let user = try await client.link(with: .apple(credential, rawNonce: nonce.raw))
        #expect(user.id == "u")
        #expect(try await client.linkWithApple(using: AppProvider()).id == "u")
        _ = SignInMethod.apple(AppProvider())
        // The new codes are named constants, as every other.
        #expect(LatchkeyError.Code.appleLoginFailed.rawValue == "apple_login_failed")
    }
}
