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

    @Test("easyLoginWithFacebook + handleOpenURL sign the person in and persist the session")
    func signIn() async throws {
        try await Stack.run(browsable: true) { stack in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("lk-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: file) }
            let client = Self.client(stack, store: FileCredentialStore(url: file))
            let url = try await client.easyLoginWithFacebook(
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
    struct BrowserSheet: WebAuthenticationSession {
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
                try await client.easyLoginWithFacebook(), stack, choose: "emulator_action=cancel")
            do throws(LatchkeyError) {
                try await client.handleOpenURL(cancelled)
                Issue.record("a cancel must throw")
            } catch {
                #expect(error.category == .userCancelled && !error.shouldNotifyUser)
            }
            #expect(await client.authState == .closedLoginFailed)

            let url = try await client.easyLoginWithFacebook()
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
            let url = try await client.easyLoginWithFacebook(
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
            _ = try await client.easyLoginWithFacebook()
            Issue.record("must throw")
        } catch {
            #expect(error.code == "easy_login_not_configured")
        }
    }
}
