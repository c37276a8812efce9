import Foundation
import Latchkey
import LatchkeyAPI
import Testing

/// The SDK's session lifecycle under the races an app meets, against the live server and emulator.
/// Each race is told step by step through `GateTransport` (an answer held until the test lets it
/// land), never by timing.
// Five minutes: a race that hangs still fails, and a full PostgreSQL pass on two cores (two
// Chromium walks beside it) took these tests up to 114 s, and once every one of them past 120.
@Suite("SDK session lifecycle", .timeLimit(.minutes(5)))
struct SDKLifecycleTests {
    static let token = "/v1/oauth/token"

    static func client(
        _ stack: Stack, _ transport: GateTransport, store: any CredentialStore = InMemoryCredentialStore()
    ) -> LatchkeyClient {
        LatchkeyClient(
            configuration: LatchkeyConfiguration(
                serverURL: stack.serverURL, facebookAppID: Demo.appID, credentialStore: store, transport: transport,
                clock: { stack.clock.now }))
    }

    /// The code `work` fails with, `nil` when it succeeds.
    static func failure<T>(_ work: @escaping @Sendable () async throws -> T) async -> LatchkeyError.Code? {
        do {
            _ = try await work()
            return nil
        } catch let error as LatchkeyError {
            return error.code
        } catch {
            return LatchkeyError.Code(rawValue: "unexpected: \(error)")
        }
    }

    /// Returns once `client` reaches `state` (read from its state stream, not by polling).
    static func waitFor(_ state: AuthState, _ client: LatchkeyClient) async {
        for await seen in await client.authStates where seen == state { return }
    }

    static func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("lk-lifecycle-\(UUID().uuidString).json")
    }

    @Test("a refresh that lands after sign-out is dropped: the user, the store and the state stay signed out")
    func refreshAfterSignOut() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let gate = GateTransport()
            let store = InMemoryCredentialStore()
            let client = Self.client(stack, gate, store: store)
            _ = try await client.signIn(with: .accessToken(try await stack.facebookToken()))
            await gate.hold(Self.token)
            let refreshing = Task { try await client.refresh() }
            await gate.waitUntilHeld(Self.token)  // the server has rotated; the app has not heard
            // The sign-out ends the session at once; it returns once the store is cleared, which
            // waits for the refresh holding the store (URLSession would cancel it; this answer lands).
            let signingOut = Task { await client.signOut() }
            await Self.waitFor(.closed, client)
            await gate.release(Self.token)
            await signingOut.value
            #expect(await Self.failure { try await refreshing.value } == .cancelled)
            #expect(await client.authState == .closed)
            #expect(await client.currentUser == nil)
            #expect(await store.load() == nil)
            #expect(await Self.failure { try await client.validAccessToken() } == .notSignedIn)
        }
    }

    @Test("Alice's refresh landing after Bob signed in never makes Alice the current user")
    func noAccountMixUp() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let gate = GateTransport()
            let store = InMemoryCredentialStore()
            let client = Self.client(stack, gate, store: store)
            let alice = try await client.signIn(with: .accessToken(try await stack.facebookToken("alice"))).user
            await gate.hold(Self.token)
            let refreshing = Task { try await client.refresh() }
            await gate.waitUntilHeld(Self.token)
            let signingOut = Task { await client.signOut() }
            await Self.waitFor(.closed, client)
            let bobToken = try await stack.facebookToken("bob")
            let signingIn = Task { try await client.signIn(with: .accessToken(bobToken)) }
            await Self.waitFor(.opening, client)
            await gate.release(Self.token)  // Alice's answer lands while Bob's sign-in is under way
            await signingOut.value
            let bob = try await signingIn.value.user
            #expect(await Self.failure { try await refreshing.value } == .cancelled)
            #expect(alice.id != bob.id)
            #expect(await client.currentUser?.id == bob.id)
            #expect(await store.load()?.user.id == bob.id)
            #expect(await client.authState == .open)
            #expect(try await client.reloadUser().id == bob.id)
        }
    }

    @Test("a new sign-in while another is in flight: the first one's answer is dropped, with `cancelled`")
    func signInSuperseded() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let gate = GateTransport()
            let client = Self.client(stack, gate)
            let aliceToken = try await stack.facebookToken("alice")
            await gate.hold("/v1/auth/facebook")
            let first = Task { try await client.signIn(with: .accessToken(aliceToken)) }
            await gate.waitUntilHeld("/v1/auth/facebook")
            let bob = try await client.signIn(with: .accessToken(try await stack.facebookToken("bob"))).user
            await gate.release("/v1/auth/facebook")
            let code = await Self.failure { try await first.value }
            #expect(code == .cancelled)
            #expect(await client.currentUser?.id == bob.id)
            #expect(await client.authState == .open)
        }
    }

    @Test(
        "an offline launch keeps the stored user and recovers: by restoring again, by any refresh, or signs out",
        arguments: ["restore again", "refresh", "sign out"])
    func offlineLaunch(recovery: String) async throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try await Stack.run { (stack: Stack) async throws in
            let gate = GateTransport()
            let first = Self.client(stack, gate, store: FileCredentialStore(url: file))
            let alice = try await first.signIn(with: .accessToken(try await stack.facebookToken())).user
            stack.clock.advance(901)  // the stored access token has expired

            let relaunched = Self.client(stack, gate, store: FileCredentialStore(url: file))
            await gate.failNext(Self.token)
            #expect(await !relaunched.restoreSession())
            #expect(await relaunched.authState == .createdTokenLoaded)
            #expect(await relaunched.currentUser?.id == alice.id)
            switch recovery {
            case "restore again":
                #expect(await relaunched.restoreSession())
                #expect(await relaunched.authState == .open)
            case "refresh":
                _ = try await relaunched.validAccessToken()
                #expect(await relaunched.authState == .open)
                #expect(try await relaunched.reloadUser().id == alice.id)
            default:
                await relaunched.signOut()
                #expect(await relaunched.authState == .closed)
                #expect(await relaunched.currentUser == nil)
                #expect(try await FileCredentialStore(url: file).load() == nil)
            }
        }
    }

    @Test("each observer gets its own state stream, starting with the current state; ending one ends no other")
    func stateStreams() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let client = Self.client(stack, GateTransport())
            var first = await client.authStates.makeAsyncIterator()
            var second = await client.authStates.makeAsyncIterator()
            #expect(await first.next() == .created)
            #expect(await second.next() == .created)
            // A SwiftUI `.task` whose view went away.
            let gone = Task { for await _ in await client.authStates {} }
            gone.cancel()
            await gone.value

            _ = try await client.signIn(with: .accessToken(try await stack.facebookToken()))
            #expect(await first.next() == .opening)
            #expect(await first.next() == .open)
            #expect(await second.next() == .opening)  // the two do not split the events
            #expect(await second.next() == .open)

            var late = await client.authStates.makeAsyncIterator()
            #expect(await late.next() == .open)  // the current state, not a backlog

            await client.signOut()
            #expect(await first.next() == .closed)
            #expect(await late.next() == .closed)
        }
    }

    @Test("two clients over one credential file refresh once between them, and neither is revoked")
    func twoClientsOneStore() async throws {
        let file = Self.temporaryFile()
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: file.appendingPathExtension("lock"))
        }
        try await Stack.run { (stack: Stack) async throws in
            let gate = GateTransport()
            // Two store instances over one file, as an app and its extension would have.
            let app = Self.client(stack, gate, store: FileCredentialStore(url: file))
            let user = try await app.signIn(with: .accessToken(try await stack.facebookToken())).user
            let widget = Self.client(stack, gate, store: FileCredentialStore(url: file))
            #expect(await widget.restoreSession())

            stack.clock.advance(901)
            async let fromApp = app.validAccessToken()
            async let fromWidget = widget.validAccessToken()
            let tokens = try await [fromApp, fromWidget]
            #expect(await gate.count(Self.token) == 1)
            #expect(Set(tokens).count == 1)
            #expect(try await app.reloadUser().id == user.id)
            #expect(try await widget.reloadUser().id == user.id)

            // Later, one refreshes alone; the other adopts what it stored, without a request.
            stack.clock.advance(901)
            _ = try await app.refresh()
            _ = try await widget.validAccessToken()
            #expect(await gate.count(Self.token) == 2)
            #expect(try await widget.reloadUser().id == user.id)
        }
    }

    @Test("another person signing in through the other client: this client adopts that session, and theirs lives")
    func otherClientSignsInSomeoneElse() async throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try await Stack.run { (stack: Stack) async throws in
            let gate = GateTransport()
            let app = Self.client(stack, gate, store: FileCredentialStore(url: file))
            _ = try await app.signIn(with: .accessToken(try await stack.facebookToken("alice")))
            let widget = Self.client(stack, gate, store: FileCredentialStore(url: file))
            #expect(await widget.restoreSession())
            stack.clock.advance(1)
            let bob = try await app.signIn(with: .accessToken(try await stack.facebookToken("bob"))).user
            stack.clock.advance(901)
            // The widget's work in flight belonged to the replaced session; it then holds Bob's.
            #expect(await Self.failure { try await widget.validAccessToken() } == .cancelled)
            #expect(await widget.currentUser?.id == bob.id)
            #expect(await widget.authState == .createdTokenLoaded)
            _ = try await widget.validAccessToken()
            #expect(await widget.authState == .open)
            #expect(try await widget.reloadUser().id == bob.id)
            #expect(try await app.reloadUser().id == bob.id)
            #expect(try await FileCredentialStore(url: file).load()?.user.id == bob.id)
        }
    }

    @Test("signOut(scope: .everywhere) ends the user's sessions on every device; offline it still signs out here")
    func signOutEverywhere() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let gate = GateTransport()
            let phone = Self.client(stack, gate)
            let tablet = Self.client(stack, gate)
            _ = try await phone.signIn(with: .accessToken(try await stack.facebookToken()))
            _ = try await tablet.signIn(with: .accessToken(try await stack.facebookToken()))
            try await phone.signOut(scope: .everywhere)
            #expect(await phone.authState == .closed)
            #expect(await Self.failure { try await tablet.reloadUser() } == .sessionRevoked)
            #expect(await tablet.authState == .closed)

            // Offline: the server cannot be told, the caller hears so, and the device is signed out anyway.
            _ = try await phone.signIn(with: .accessToken(try await stack.facebookToken()))
            await gate.failNext("/v1/auth/logout")
            #expect(await Self.failure { try await phone.signOut(scope: .thisDevice) } == .networkUnavailable)
            #expect(await phone.authState == .closed)
            #expect(await phone.currentUser == nil)
        }
    }

    @Test("sign-out with an expired access token still revokes the session on the server")
    func signOutAfterExpiry() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let gate = GateTransport()
            let store = InMemoryCredentialStore()
            let client = Self.client(stack, gate, store: store)
            _ = try await client.signIn(with: .accessToken(try await stack.facebookToken()))
            let refreshToken = try #require(await store.load()?.refreshToken)
            stack.clock.advance(901)
            try await client.signOut(scope: .thisDevice)
            // The expired access token was refreshed first, and logout accepted the new one.
            let answers = await gate.answered.map { "\($0.path) \($0.status)" }
            #expect(answers.suffix(2) == ["/v1/oauth/token 200", "/v1/auth/logout 204"])
            let reuse = try await stack.postForm(
                "/v1/oauth/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
            #expect(reuse.status != .ok)
        }
    }

    @Test("server nonces: the SDK asks for one, Facebook gets its hash, the sign-in its raw value")
    func serverNonce() async throws {
        try await Stack.run({ $0.signIn.requireServerNonce = true }) { (stack: Stack) async throws in
            let client = Self.client(stack, GateTransport())
            let issued = try await client.serverNonce()
            #expect(issued.expiresAt > stack.clock.now)
            let idToken = try await stack.idToken("carol", nonce: issued.nonce.sha256)
            let result = try await client.signIn(with: .limitedLogin(idToken: idToken, rawNonce: issued.nonce.raw))
            #expect(result.isNewUser)
            // Single use.
            let again = try await stack.idToken("carol", nonce: issued.nonce.sha256)
            let code = await Self.failure {
                try await client.signIn(with: .limitedLogin(idToken: again, rawNonce: issued.nonce.raw))
            }
            #expect(code == .nonceInvalid)
        }
    }

    // MARK: Two clients over one store, one of them signing in or out while the other works

    @Test("the other client's refresh landing after a new sign-in does not overwrite it")
    func refreshAfterOtherClientSignsIn() async throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try await Stack.run { (stack: Stack) async throws in
            let widgetGate = GateTransport()
            let app = Self.client(stack, GateTransport(), store: FileCredentialStore(url: file))
            _ = try await app.signIn(with: .accessToken(try await stack.facebookToken("alice")))
            let widget = Self.client(stack, widgetGate, store: FileCredentialStore(url: file))
            #expect(await widget.restoreSession())
            await widgetGate.hold(Self.token)
            let refreshing = Task { try await widget.refresh() }
            await widgetGate.waitUntilHeld(Self.token)
            stack.clock.advance(1)
            // The app's save waits for the widget's refresh (it holds the store), then wins.
            let signingIn = Task { try await app.signIn(with: .accessToken(try await stack.facebookToken("bob"))) }
            await widgetGate.release(Self.token)
            _ = try await refreshing.value
            let bob = try await signingIn.value.user
            #expect(try await FileCredentialStore(url: file).load()?.user.id == bob.id)
            _ = try await app.refresh()
            #expect(await app.currentUser?.id == bob.id)
            // The widget then finds Bob's session in the store and adopts it (its refresh in
            // flight belonged to Alice's).
            #expect(await Self.failure { try await widget.refresh() } == .cancelled)
            #expect(await widget.currentUser?.id == bob.id)
            #expect(try await widget.reloadUser().id == bob.id)
        }
    }

    @Test("a session ended by the server clears the store only if it still holds that session")
    func endedSessionKeepsOthersStore() async throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try await Stack.run { (stack: Stack) async throws in
            let app = Self.client(stack, GateTransport(), store: FileCredentialStore(url: file))
            _ = try await app.signIn(with: .accessToken(try await stack.facebookToken("alice")))
            let widget = Self.client(stack, GateTransport(), store: FileCredentialStore(url: file))
            #expect(await widget.restoreSession())
            await app.signOut()
            stack.clock.advance(1)
            _ = try await app.signIn(with: .accessToken(try await stack.facebookToken("alice")))
            #expect(await Self.failure { try await widget.reloadUser() } == .sessionRevoked)
            #expect(await widget.authState == .closed)
            await widget.signOut()  // nothing to end; waits for the widget's queued store write
            #expect(try await FileCredentialStore(url: file).load() != nil)
            #expect(try await app.reloadUser().string("name") == "Alice Liddell")
        }
    }

    @Test("a sign-out in one client, even offline, is not undone by the other client's refresh")
    func offlineSignOutStays() async throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try await Stack.run { (stack: Stack) async throws in
            let appGate = GateTransport()
            let app = Self.client(stack, appGate, store: FileCredentialStore(url: file))
            _ = try await app.signIn(with: .accessToken(try await stack.facebookToken()))
            let widget = Self.client(stack, GateTransport(), store: FileCredentialStore(url: file))
            #expect(await widget.restoreSession())
            await appGate.failNext("/v1/auth/logout")
            #expect(await Self.failure { try await app.signOut(scope: .thisDevice) } == .networkUnavailable)
            #expect(await Self.failure { try await widget.refresh() } == .notSignedIn)
            #expect(await widget.authState == .closed)
            let relaunched = Self.client(stack, GateTransport(), store: FileCredentialStore(url: file))
            #expect(await !relaunched.restoreSession())
        }
    }

    @Test("reloading the user in one client never stores a refresh token the other one spent")
    func reloadUserKeepsNewestTokens() async throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try await Stack.run { (stack: Stack) async throws in
            let app = Self.client(stack, GateTransport(), store: FileCredentialStore(url: file))
            _ = try await app.signIn(with: .accessToken(try await stack.facebookToken()))
            let widget = Self.client(stack, GateTransport(), store: FileCredentialStore(url: file))
            #expect(await widget.restoreSession())
            stack.clock.advance(1)
            _ = try await app.refresh()
            _ = try await widget.reloadUser()
            stack.clock.advance(1)
            #expect(await Self.failure { try await widget.refresh() } == nil)
            #expect(await Self.failure { try await app.reloadUser() } == nil)
        }
    }

    @Test("two Keychain-style stores over the same items share one lock")
    func secureItemStoresShareALock() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let items = SharedItems()
            let appGate = GateTransport()
            let app = Self.client(stack, appGate, store: SecureItemCredentialStore(items: items))
            _ = try await app.signIn(with: .accessToken(try await stack.facebookToken()))
            let other = Self.client(stack, GateTransport(), store: SecureItemCredentialStore(items: items))
            #expect(await other.restoreSession())
            stack.clock.advance(1)
            await appGate.hold(Self.token)
            let refreshing = Task { try await app.refresh() }
            await appGate.waitUntilHeld(Self.token)
            let waiting = Task { try await other.refresh() }
            await appGate.release(Self.token)
            _ = try await refreshing.value
            _ = try await waiting.value  // adopted the app's tokens instead of spending the same one
            #expect(try await other.reloadUser().id == (await app.currentUser?.id))
            #expect(try await app.reloadUser().id == (await other.currentUser?.id))
        }
    }

    @Test("signing out everywhere while a refresh is in flight still reaches every device")
    func signOutEverywhereDuringRefresh() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let gate = GateTransport()
            let phone = Self.client(stack, gate)
            let tablet = Self.client(stack, GateTransport())
            _ = try await phone.signIn(with: .accessToken(try await stack.facebookToken()))
            _ = try await tablet.signIn(with: .accessToken(try await stack.facebookToken()))
            stack.clock.advance(901)
            await gate.hold(Self.token)
            let refreshing = Task { try await phone.validAccessToken() }
            await gate.waitUntilHeld(Self.token)
            let signingOut = Task { try await phone.signOut(scope: .everywhere) }
            // The sign-out has ended the session here before the refresh's answer arrives; on a
            // loaded machine the task could otherwise start only after the refresh landed.
            try await eventually("the sign-out ended the session locally") { await phone.authState == .closed }
            await gate.release(Self.token)
            try await signingOut.value
            #expect(await Self.failure { try await refreshing.value } == .cancelled)
            #expect(await phone.authState == .closed)
            #expect(await Self.failure { try await tablet.refresh() } == .refreshTokenInvalid)
            #expect(await tablet.authState == .closed)
        }
    }

    @Test("a sign-out before restoring clears the stored session and revokes it on the server")
    func signOutBeforeRestore() async throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try await Stack.run { (stack: Stack) async throws in
            let first = Self.client(stack, GateTransport(), store: FileCredentialStore(url: file))
            try await first.signIn(with: .accessToken(try await stack.facebookToken()))
            let token = try await first.validAccessToken()
            // A reinstalled app signing out on first launch: nothing loaded, the Keychain still full.
            let relaunched = Self.client(stack, GateTransport(), store: FileCredentialStore(url: file))
            try await relaunched.signOut(scope: .thisDevice)
            #expect(try await FileCredentialStore(url: file).load() == nil)
            #expect(await !relaunched.restoreSession())
            #expect(try await stack.get("/v1/users/me", bearer: token).errorCode == "session_revoked")
        }
    }

    @Test("signing out everywhere from a client whose copy another client refreshed uses the newest tokens")
    func signOutEverywhereWithStaleCopy() async throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file) }
        try await Stack.run { (stack: Stack) async throws in
            let gate = GateTransport()
            let app = Self.client(stack, gate, store: FileCredentialStore(url: file))
            try await app.signIn(with: .accessToken(try await stack.facebookToken()))
            let widget = Self.client(stack, GateTransport(), store: FileCredentialStore(url: file))
            #expect(await widget.restoreSession())
            let tablet = Self.client(stack, GateTransport())
            try await tablet.signIn(with: .accessToken(try await stack.facebookToken()))
            stack.clock.advance(901)
            _ = try await widget.refresh()  // the app's copy is now stale and its access token expired
            try await app.signOut(scope: .everywhere)
            #expect(await gate.answered.last.map { "\($0.path) \($0.status)" } == "/v1/auth/logout-all 200")
            // The tablet's access token has expired too; its refresh finds the session ended.
            #expect(await Self.failure { try await tablet.reloadUser() } == .refreshTokenInvalid)
        }
    }

    @Test("a sign-in that fails or is cancelled leaves the signed-in person signed in")
    func failedSignInKeepsSession() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let client = Self.client(stack, GateTransport())
            let alice = try await client.signIn(with: .accessToken(try await stack.facebookToken())).user
            #expect(
                await Self.failure { try await client.signIn(with: .accessToken("EAAjunk")) } == .facebookTokenInvalid)
            #expect(await client.currentUser?.id == alice.id)
            #expect(await client.authState.isOpen)
            #expect(try await client.reloadUser().id == alice.id)
        }
    }
}

/// Items in memory, shared by two stores as one Keychain item is shared by two store instances.
actor SharedItems: SecureItemStore {
    private var items: [String: Data] = [:]
    func read(account: String) -> Data? { items[account] }
    func write(_ data: Data, account: String) { items[account] = data }
    func delete(account: String) { items[account] = nil }
}
