import Foundation
import Latchkey
import LatchkeyAPI
import Synchronization
import Testing

/// The SDK's Easy Login against the live server and emulator: the URL it makes is followed by a
/// test browser, and the redirect is handed to `handleOpenURL`, as an app's `onOpenURL` would.
@Suite("SDK Easy Login")
struct SDKEasyLoginTests {
    static func client(
        _ stack: Stack, redirect: String = Demo.appRedirect, store: any CredentialStore = InMemoryCredentialStore()
    ) -> LatchkeyClient {
        LatchkeyClient(
            configuration: LatchkeyConfiguration(
                serverURL: stack.serverURL, facebookAppID: Demo.appID, credentialStore: store,
                clock: { stack.clock.now }, oauthClientID: Demo.clientID, redirectURI: redirect))
    }

    static func browse(_ url: URL, _ stack: Stack, choose: String = "emulator_user=bob") async throws -> URL {
        let outcome = try await TestBrowser.signIn(url.absoluteString, stack: stack, choose: choose)
        let location = try #require(outcome.location)
        return try #require(URL(string: location))
    }

    @Test("makeEasyLoginURL + handleOpenURL sign the person in and persist the session")
    func signIn() async throws {
        try await Stack.run(browsable: true) { stack in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("lk-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: file) }
            let client = Self.client(stack, store: FileCredentialStore(url: file))
            let url = try await client.makeEasyLoginURL(
                fieldsMapping: ["email": "email", "first_name": "firstName"], permissions: ["email"])
            #expect(await client.authState == .opening)
            let redirect = try await Self.browse(url, stack)
            #expect(await client.canHandleOpenURL(redirect))
            let user = try await client.handleOpenURL(redirect)
            #expect(user.string("email") == "bob@example.com" && user.string("firstName") == "Bob")
            #expect(await client.authState == .open)
            #expect(try await client.reloadUser().id == user.id)

            // The session survives a restart, as any other.
            let restarted = Self.client(stack, store: FileCredentialStore(url: file))
            #expect(await restarted.restoreSession())
            #expect(await restarted.currentUser?.id == user.id)
            // A second delivery of the same URL has nothing waiting for it.
            await #expect(throws: LatchkeyError.self) { try await client.handleOpenURL(redirect) }
        }
    }

    /// A web authentication sheet played by the test browser, as `ASWebAuthenticationSession` would
    /// play it: open the URL, follow the dialog, hand back the redirect.
    struct BrowserSheet: WebAuthenticator {
        let stack: Stack
        func authenticate(url: URL, callback: WebAuthenticationCallback, prefersEphemeral: Bool) async throws -> URL {
            #expect(callback == .customScheme("testapp"))
            return try await SDKEasyLoginTests.browse(url, stack)
        }
    }

    @Test("signInWithEasyLogin drives a web authentication session from the URL to the signed-in user")
    func webAuthenticationSession() async throws {
        try await Stack.run(browsable: true) { (stack: Stack) async throws in
            let client = Self.client(stack)
            let user = try await client.signInWithEasyLogin(using: BrowserSheet(stack: stack), permissions: ["email"])
            #expect(user.string("email") == "bob@example.com")
            #expect(await client.authState == .open)
            #expect(try await client.reloadUser().id == user.id)
        }
    }

    @Test("a cancel on Facebook is userCancelled; a forged URL does not end the real attempt")
    func cancelAndForgery() async throws {
        try await Stack.run(browsable: true) { stack in
            let client = Self.client(stack)
            let cancelled = try await Self.browse(
                try await client.makeEasyLoginURL(), stack, choose: "emulator_action=cancel")
            do throws(LatchkeyError) {
                try await client.handleOpenURL(cancelled)
                Issue.record("a cancel must throw")
            } catch {
                #expect(error.category == .userCancelled && !error.shouldNotifyUser)
            }
            #expect(await client.authState == .closedLoginFailed)

            let url = try await client.makeEasyLoginURL()
            let forged = URL(string: Demo.appRedirect + "?code=stolen&state=forged")!
            do throws(LatchkeyError) {
                try await client.handleOpenURL(forged)
                Issue.record("a forged state must throw")
            } catch {
                #expect(error.code == "state_mismatch")
            }
            #expect(
                try await client.handleOpenURL(try await Self.browse(url, stack)).string("name") == "Bob Marley Smith")
        }
    }

    @Test("a loopback redirect (desktop) and the completion-handler form")
    func loopbackAndCompletion() async throws {
        try await Stack.run(browsable: true) { stack in
            let client = Self.client(stack, redirect: "unused://")
            let url = try await client.makeEasyLoginURL(
                permissions: ["email"], redirectURI: "http://127.0.0.1:40123/callback")
            let redirect = try await Self.browse(url, stack)
            #expect(redirect.absoluteString.hasPrefix("http://127.0.0.1:40123/callback?"))
            let user: LatchkeyUser = try await withCheckedThrowingContinuation { continuation in
                client.handleOpenURL(
                    redirect, response: { continuation.resume(returning: $0) },
                    error: { continuation.resume(throwing: $0) })
            }
            #expect(user.string("email") == "bob@example.com")
        }
    }

    @Test("without a client id the SDK says what to configure")
    func notConfigured() async throws {
        let client = LatchkeyClient(
            configuration: LatchkeyConfiguration(
                serverURL: URL(string: "http://127.0.0.1:1")!, facebookAppID: "1",
                credentialStore: InMemoryCredentialStore()))
        do throws(LatchkeyError) {
            _ = try await client.makeEasyLoginURL()
            Issue.record("must throw")
        } catch {
            #expect(error.code == "easy_login_not_configured")
        }
    }

    // MARK: The attempt kept across a relaunch

    static func temporaryStoreFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("lk-\(UUID().uuidString).json")
    }

    static func removeStoreFiles(_ file: URL) {
        for suffix in ["", ".pending", ".lock"] {
            try? FileManager.default.removeItem(at: URL(fileURLWithPath: file.path + suffix))
        }
    }

    @Test("an app killed while the person is in the browser finishes the sign-in when the redirect relaunches it")
    func relaunchFinishesTheAttempt() async throws {
        try await Stack.run(browsable: true) { (stack: Stack) async throws in
            let file = Self.temporaryStoreFile()
            defer { Self.removeStoreFiles(file) }
            let killed = Self.client(stack, store: FileCredentialStore(url: file))
            let url = try await killed.makeEasyLoginURL(permissions: ["email"])
            let redirect = try await Self.browse(url, stack)

            // The attempt is on disk, readable by the owner only, and its secrets stay out of descriptions.
            let pendingFile = URL(fileURLWithPath: file.path + ".pending")
            let attributes = try FileManager.default.attributesOfItem(atPath: pendingFile.path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let kept = try #require(try await FileCredentialStore(url: file).loadPendingEasyLogin())
            #expect(!String(describing: kept).contains(kept.request.codeVerifier))
            #expect(!String(describing: kept).contains(kept.request.state))

            // A new process: a fresh client over the same store, which never saw the attempt.
            let relaunched = Self.client(stack, store: FileCredentialStore(url: file))
            #expect(await relaunched.authState == .created)
            #expect(await relaunched.canHandleOpenURL(redirect))
            let user = try await relaunched.handleOpenURL(redirect)
            #expect(user.string("email") == "bob@example.com")
            #expect(await relaunched.authState == .open)
            #expect(try await relaunched.reloadUser().id == user.id)
            #expect(!FileManager.default.fileExists(atPath: pendingFile.path))

            // The code is spent and the attempt forgotten: a third launch has nothing to finish.
            let again = Self.client(stack, store: FileCredentialStore(url: file))
            #expect(await Self.code { try await again.handleOpenURL(redirect) } == .noPendingLogin)
        }
    }

    /// The code `work` fails with; `nil` when it succeeds.
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

    @Test(
        "a kept attempt is not started by a URL without its state, and is forgotten when cancelled, superseded or an hour old"
    )
    func keptAttemptRules() async throws {
        try await Stack.run(browsable: true) { (stack: Stack) async throws in
            let store = InMemoryCredentialStore()

            // A link without the attempt's state changes nothing, and the real redirect still works.
            let first = Self.client(stack, store: store)
            let redirect = try await Self.browse(try await first.makeEasyLoginURL(), stack)
            let relaunched = Self.client(stack, store: store)
            let forged = URL(string: Demo.appRedirect + "?code=stolen&state=forged&iss=x")!
            #expect(await Self.code { try await relaunched.handleOpenURL(forged) } == .noPendingLogin)
            #expect(await relaunched.authState == .created)
            #expect(await store.loadPendingEasyLogin() != nil)
            _ = try await relaunched.handleOpenURL(redirect)
            #expect(await store.loadPendingEasyLogin() == nil)

            // Cancelled: the store forgets it too, in this process or after a relaunch.
            let cancelStore = InMemoryCredentialStore()
            let cancelling = Self.client(stack, store: cancelStore)
            let cancelledRedirect = try await Self.browse(try await cancelling.makeEasyLoginURL(), stack)
            await cancelling.cancelEasyLogin()
            #expect(await cancelling.authState == .closedLoginFailed)
            #expect(await cancelStore.loadPendingEasyLogin() == nil)
            #expect(
                await Self.code { try await Self.client(stack, store: cancelStore).handleOpenURL(cancelledRedirect) }
                    == .noPendingLogin)
            let relaunchStore = InMemoryCredentialStore()
            let started = Self.client(stack, store: relaunchStore)
            let abandoned = try await Self.browse(try await started.makeEasyLoginURL(), stack)
            let cancelledAfterRelaunch = Self.client(stack, store: relaunchStore)
            await cancelledAfterRelaunch.cancelEasyLogin()
            #expect(await relaunchStore.loadPendingEasyLogin() == nil)
            #expect(await cancelledAfterRelaunch.authState == .created)
            #expect(await Self.code { try await cancelledAfterRelaunch.handleOpenURL(abandoned) } == .noPendingLogin)

            // Superseded by a newer attempt: only the newest is kept.
            let superseding = InMemoryCredentialStore()
            let older = Self.client(stack, store: superseding)
            let olderRedirect = try await Self.browse(try await older.makeEasyLoginURL(), stack)
            let newerURL = try await older.makeEasyLoginURL()
            let afterKill = Self.client(stack, store: superseding)
            #expect(await Self.code { try await afterKill.handleOpenURL(olderRedirect) } == .noPendingLogin)
            _ = try await afterKill.handleOpenURL(try await Self.browse(newerURL, stack))

            // An hour later the attempt is forgotten unread, whatever the server would say.
            let stale = InMemoryCredentialStore()
            let starting = Self.client(stack, store: stale)
            let staleRedirect = try await Self.browse(try await starting.makeEasyLoginURL(), stack)
            let muchLater = LatchkeyClient(
                configuration: LatchkeyConfiguration(
                    serverURL: stack.serverURL, facebookAppID: Demo.appID, credentialStore: stale,
                    clock: { stack.clock.now.addingTimeInterval(PendingEasyLogin.lifetime + 1) },
                    oauthClientID: Demo.clientID, redirectURI: Demo.appRedirect))
            do throws(LatchkeyError) {
                try await muchLater.handleOpenURL(staleRedirect)
                Issue.record("an hour-old attempt must not finish")
            } catch {
                #expect(error.code == .noPendingLogin)
            }
            #expect(await stale.loadPendingEasyLogin() == nil)
        }
    }

    @Test("the same redirect handled twice after a relaunch redeems the code once; the session survives")
    func redirectHandledTwice() async throws {
        try await Stack.run(browsable: true) { (stack: Stack) async throws in
            let store = InMemoryCredentialStore()
            let first = Self.client(stack, store: store)
            let redirect = try await Self.browse(try await first.makeEasyLoginURL(), stack)
            let relaunched = Self.client(stack, store: store)
            async let one = Self.outcome { () throws(LatchkeyError) in try await relaunched.handleOpenURL(redirect) }
            async let two = Self.outcome { () throws(LatchkeyError) in try await relaunched.handleOpenURL(redirect) }
            let outcomes = await [one, two]
            let users = outcomes.compactMap(\.user)
            let codes = outcomes.compactMap(\.code)
            #expect(users.count == 1 && codes == [.noPendingLogin])
            #expect(await relaunched.authState == .open)
            #expect(try await relaunched.reloadUser().id == users.first?.id)
        }
    }

    @Test("a sign-in over a stored session this client never loaded ends that session on the server")
    func signInOverUnloadedSession() async throws {
        try await Stack.run(browsable: true) { (stack: Stack) async throws in
            let store = InMemoryCredentialStore()
            let earlier = Self.client(stack, store: store)
            _ = try await earlier.handleOpenURL(try await Self.browse(try await earlier.makeEasyLoginURL(), stack))
            let oldToken = try #require(await store.load()?.accessToken)

            // A relaunch whose redirect is handled before the restore ran.
            let gate = GateTransport()
            await gate.hold("/v1/auth/logout")
            let relaunched = LatchkeyClient(
                configuration: LatchkeyConfiguration(
                    serverURL: stack.serverURL, facebookAppID: Demo.appID, credentialStore: store, transport: gate,
                    clock: { stack.clock.now }, oauthClientID: Demo.clientID, redirectURI: Demo.appRedirect))
            _ = try await relaunched.handleOpenURL(
                try await Self.browse(try await relaunched.makeEasyLoginURL(), stack))
            #expect(await store.load()?.accessToken != oldToken)
            // The server has answered the background logout of the overwritten session.
            await gate.waitUntilHeld("/v1/auth/logout")
            await gate.release("/v1/auth/logout")
            #expect(try await stack.get("/v1/users/me", bearer: oldToken).errorCode == "session_revoked")
        }
    }

    /// The user or the error code a sign-in ended with.
    static func outcome(
        _ body: () async throws(LatchkeyError) -> LatchkeyUser
    ) async -> (user: LatchkeyUser?, code: ErrorCode?) {
        do throws(LatchkeyError) {
            return (try await body(), nil)
        } catch {
            return (nil, error.code)
        }
    }
}
