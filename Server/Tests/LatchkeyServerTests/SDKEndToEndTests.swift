import Foundation
import Latchkey
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The SDK against the real server and emulator, over URLSession only.
@Suite("SDK end to end")
struct SDKEndToEndTests {
    static func client(_ stack: Stack, store: any CredentialStore = InMemoryCredentialStore()) -> LatchkeyClient {
        LatchkeyClient(
            configuration: LatchkeyConfiguration(
                serverURL: stack.serverURL, facebookAppID: Demo.appID, credentialStore: store,
                clock: { stack.clock.now }))
    }

    @Test("classic sign-in opens a session and reports states")
    func classic() async throws {
        try await Stack.run { stack in
            let client = Self.client(stack)
            let result = try await client.signIn(with: .accessToken(try await stack.facebookToken()))
            #expect(result.isNewUser && result.user.string("email") == "alice@example.com")
            #expect(await client.authState == .open)
            #expect(await client.currentUser?.id == result.user.id)
            var states: [AuthState] = []
            for await state in await client.authStates {
                states.append(state)
                if state == .open { break }
            }
            #expect(states == [.open])  // a new stream starts with the current state
            let again = try await client.loginWithFacebook(accessToken: try await stack.facebookToken())
            #expect(again.id == result.user.id)
        }
    }

    @Test("Limited Login with the SDK's nonce: SHA-256 to Facebook, raw to Latchkey")
    func limitedLogin() async throws {
        try await Stack.run { stack in
            let nonce = Nonce()
            let configuration = try #require(
                FacebookLoginConfiguration(permissions: ["email"], tracking: .limited, nonce: nonce.sha256))
            let idToken = try await stack.idToken("bob", nonce: configuration.nonce)
            let result = try await Self.client(stack).signIn(with: .limitedLogin(idToken: idToken, rawNonce: nonce.raw))
            #expect(result.user.string("email") == "bob@example.com")
        }
    }

    @Test("a restarted app restores the session silently from the file store")
    func restore() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "latchkey-e2e-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: url) }
        try await Stack.run { stack in
            let first = Self.client(stack, store: FileCredentialStore(url: url))
            let signedIn = try await first.signIn(with: .accessToken(try await stack.facebookToken())).user
            let relaunched = Self.client(stack, store: FileCredentialStore(url: url))
            #expect(await relaunched.restoreSession())
            #expect(await relaunched.currentUser?.id == signedIn.id)
            #expect(await relaunched.authState == .open)
            #expect(try await relaunched.reloadUser().id == signedIn.id)
            // Stored tokens of another server are ignored.
            let elsewhere = LatchkeyClient(
                configuration: LatchkeyConfiguration(
                    serverURL: URL(string: "http://127.0.0.1:1")!, facebookAppID: Demo.appID,
                    credentialStore: FileCredentialStore(url: url)))
            #expect(await !elsewhere.restoreSession())
        }
    }

    @Test("an expired access token is refreshed once, even for concurrent callers")
    func refresh() async throws {
        try await Stack.run { stack in
            let client = Self.client(stack)
            _ = try await client.signIn(with: .accessToken(try await stack.facebookToken()))
            let before = try await client.validAccessToken()
            stack.clock.advance(900)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<5 { group.addTask { try await client.validAccessToken() } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1 && !tokens.contains(before))
            #expect(await client.authState == .openTokenExtended)
            #expect(try await client.reloadUser().string("name") == "Alice Liddell")
        }
    }

    @Test("sign-out revokes the server session and clears the store")
    func signOut() async throws {
        try await Stack.run { stack in
            let store = InMemoryCredentialStore()
            let client = Self.client(stack, store: store)
            _ = try await client.signIn(with: .accessToken(try await stack.facebookToken()))
            let token = try await client.validAccessToken()
            await client.signOut()
            #expect(await client.authState == .closed)
            #expect(await client.currentUser == nil)
            #expect(await store.load() == nil)
            #expect(try await stack.get("/v1/users/me", bearer: token).errorCode == "session_revoked")
            await #expect(throws: LatchkeyError.self) { try await client.reloadUser() }
        }
    }

    @Test("each error category is reached")
    func categories() async throws {
        try await Stack.run({ $0.users.writableProperties = ["nickname"] }) { stack in
            let client = Self.client(stack)
            func category(_ work: () async throws -> Void) async -> String? {
                do {
                    try await work()
                    return nil
                } catch let error as LatchkeyError {
                    return error.category.description
                } catch {
                    return "unexpected"
                }
            }
            #expect(await category { _ = try await client.signIn(with: .accessToken("EAAjunk")) } == "reopenSession")
            #expect(await client.authState == .closedLoginFailed)
            let token = try await stack.facebookToken()
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "/debug_token", "preset": "server_error", "count": 1])
            #expect(await category { _ = try await client.signIn(with: .accessToken(token)) } == "transient")
            // On `debug_token`, not `/me`: the failed sign-in above cancelled its `/me`, which may
            // still reach the emulator after this fault is set and use it up.
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "/debug_token", "preset": "rate_limit_app", "count": 1])
            #expect(await category { _ = try await client.signIn(with: .accessToken(token)) } == "throttling")
            _ = try await client.signIn(with: .accessToken(token))
            #expect(await category { _ = try await client.updateUser(properties: ["email": "x"]) } == "permissions")
            #expect(try await client.updateUser(properties: ["nickname": "Al"]).string("nickname") == "Al")
            #expect(await category { _ = try await client.signIn(with: .accessToken("")) } == "other")
            let offline = LatchkeyClient(
                configuration: LatchkeyConfiguration(
                    serverURL: URL(string: "http://127.0.0.1:1")!, facebookAppID: Demo.appID,
                    credentialStore: InMemoryCredentialStore()))
            #expect(await category { _ = try await offline.signIn(with: .accessToken(token)) } == "transient")
            let bad = try await stack.signIn(["accessToken": "x", "idToken": "y"])
            #expect(bad.errorCode == "invalid_request")
        }
    }

    @Test("a server failure is the server category")
    func serverCategory() async throws {
        // A wrong app secret makes Facebook refuse the server's own credentials: a 500, not the user's fault.
        // The start-up check would refuse this configuration; it is off to reach the sign-in.
        try await Stack.run({
            $0.facebook.apps = [.init(id: Demo.appID, secret: "wrong-secret")]
            $0.facebook.startupCheck = .off
        }) { stack in
            do {
                _ = try await Self.client(stack).signIn(with: .accessToken(try await stack.facebookToken()))
                Issue.record("sign-in with a misconfigured server succeeded")
            } catch let error as LatchkeyError {
                #expect(error.category == .server && error.httpStatus == 500 && !error.shouldNotifyUser)
            }
        }
    }

    @Test("a 401 on a token the device thought fresh triggers one refresh and a retry")
    func refreshOn401() async throws {
        try await Stack.run { stack in
            // The device's clock stands still, so it does not see the expiry coming; the server does.
            let frozen = stack.clock.now
            let client = LatchkeyClient(
                configuration: LatchkeyConfiguration(
                    serverURL: stack.serverURL, facebookAppID: Demo.appID, credentialStore: InMemoryCredentialStore(),
                    clock: { frozen }))
            _ = try await client.signIn(with: .accessToken(try await stack.facebookToken()))
            stack.clock.advance(901)
            #expect(try await client.reloadUser().string("name") == "Alice Liddell")
            #expect(await client.authState == .openTokenExtended)
        }
    }

    @Test("completion-handler overloads deliver results and errors")
    func completionHandlers() async throws {
        try await Stack.run { stack in
            let client = Self.client(stack)
            let token = try await stack.facebookToken()
            let user: LatchkeyUser = try await withCheckedThrowingContinuation { continuation in
                client.loginWithFacebook(
                    accessToken: token, response: { continuation.resume(returning: $0) },
                    error: { continuation.resume(throwing: $0) })
            }
            #expect(user.string("name") == "Alice Liddell")
            let code: LatchkeyError.Code? = await withCheckedContinuation { continuation in
                client.signIn(with: .accessToken("EAAjunk")) { result, error in
                    continuation.resume(returning: result == nil ? error?.code : nil)
                }
            }
            #expect(code == "facebook_token_invalid")
        }
    }
}
