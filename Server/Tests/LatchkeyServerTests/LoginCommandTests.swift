import Foundation
import Latchkey
import Synchronization
import Testing

@testable import LatchkeyCLI

#if canImport(Glibc)
import Glibc
#endif

/// `latchkey login`'s flow against the live server: the loopback receiver really listens, and the
/// test browser delivers the redirect to it over HTTP.
@Suite("latchkey login")
struct LoginCommandTests {
    /// A browser that signs in as `user` and follows the final redirect to the loopback receiver.
    static func browser(_ stack: Stack, user: String = "carol") -> @Sendable (URL) async -> Void {
        { url in
            do {
                let outcome = try await TestBrowser.signIn(
                    url.absoluteString, stack: stack, choose: "emulator_user=\(user)")
                let loopback = try #require(outcome.location)
                #expect(loopback.hasPrefix("http://127.0.0.1:"))
                guard case .page(let status, let body) = try await TestBrowser.get(loopback) else {
                    Issue.record("the receiver must answer with a page")
                    return
                }
                #expect(status == 200 && body.contains("Back to your terminal"))
            } catch {
                Issue.record(error)
            }
        }
    }

    @Test("signs in through the loopback redirect and saves the session")
    func login() async throws {
        try await Stack.run(browsable: true) { stack in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("lk-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: file) }
            let said = Said()
            let user = try await LoopbackLogin.run(
                server: stack.serverURL, clientID: Demo.clientID, permissions: ["email"],
                fieldsMapping: ["name": "name"], store: FileCredentialStore(url: file), timeout: .seconds(30),
                openBrowser: Self.browser(stack), say: { said.append($0) })
            #expect(user.string("name") == "Carol Nomail")
            #expect(said.text.contains("/v1/oauth/authorize?"))
            #expect(!said.text.contains("access_token"))
            let stored = try #require(try await FileCredentialStore(url: file).load())
            #expect(stored.user.id == user.id && stored.serverURL == stack.serverURL)
        }
    }

    @Test("mistakes stop before the browser, naming what to change: host, client id, no server")
    func preflight() async throws {
        try await Stack.run(browsable: true) { (stack: Stack) async throws in
            let port = stack.serverURL.port ?? 0
            let opened = Said()
            await #expect {
                _ = try await LoopbackLogin.run(
                    server: try #require(URL(string: "http://localhost:\(port)")), clientID: Demo.clientID,
                    permissions: [], fieldsMapping: nil, store: InMemoryCredentialStore(), timeout: .seconds(30),
                    openBrowser: { opened.append($0.absoluteString) }, say: { _ in })
            } throws: {
                "\($0)".contains(
                    "calls itself http://127.0.0.1:\(port); sign in with --server http://127.0.0.1:\(port)")
            }
            #expect(opened.text.isEmpty)
            await #expect {
                try await LoginPreflight.check(server: stack.serverURL, clientID: "no-such-client")
            } throws: { "\($0)".contains("does not know client id 'no-such-client'") }
            try await LoginPreflight.check(server: stack.serverURL, clientID: Demo.clientID)
        }
        // Nothing listens on a port just released.
        let closed = try HeldPort.hold()
        close(closed.descriptor)
        await #expect {
            try await LoginPreflight.check(
                server: try #require(URL(string: "http://127.0.0.1:\(closed.port)")), clientID: Demo.clientID)
        } throws: { "\($0)".contains("no server answers at http://127.0.0.1:\(closed.port)") }
    }

    @Test("a request to the loopback port without this attempt's state is ignored, not fatal")
    func foreignRequest() async throws {
        try await Stack.run(browsable: true) { stack in
            let real = Self.browser(stack, user: "alice")
            let said = Said()
            let user = try await LoopbackLogin.run(
                server: stack.serverURL, clientID: Demo.clientID, permissions: ["email"], fieldsMapping: nil,
                store: InMemoryCredentialStore(), timeout: .seconds(30),
                openBrowser: { url in
                    // Another local program finds the port first.
                    let redirect = TestBrowser.query(url.absoluteString)["redirect_uri"] ?? ""
                    _ = try? await TestBrowser.get(redirect + "?code=stolen&state=forged")
                    _ = try? await TestBrowser.get(redirect)
                    await real(url)
                }, say: { said.append($0) })
            #expect(user.string("email") == "alice@example.com")
            #expect(said.text.contains("Ignored a request"))
        }
    }

    @Test("a cancel in the browser ends the command with user_cancelled")
    func cancel() async throws {
        try await Stack.run(browsable: true) { stack in
            let cancelling: @Sendable (URL) async -> Void = { url in
                do {
                    let outcome = try await TestBrowser.signIn(
                        url.absoluteString, stack: stack, choose: "emulator_action=cancel")
                    _ = try await TestBrowser.get(try #require(outcome.location))
                } catch {
                    Issue.record(error)
                }
            }
            do {
                _ = try await LoopbackLogin.run(
                    server: stack.serverURL, clientID: Demo.clientID, permissions: [], fieldsMapping: nil,
                    store: InMemoryCredentialStore(), timeout: .seconds(30), openBrowser: cancelling, say: { _ in })
                Issue.record("a cancel must throw")
            } catch let error as LatchkeyError {
                #expect(error.category == .userCancelled)
            }
        }
    }

    @Test("the default credentials path follows XDG_CONFIG_HOME, then HOME")
    func credentialsPath() {
        #expect(LoginCommand.defaultCredentialsPath(["XDG_CONFIG_HOME": "/x"]) == "/x/latchkey/credentials.json")
        #expect(LoginCommand.defaultCredentialsPath(["HOME": "/h"]) == "/h/.config/latchkey/credentials.json")
    }
}

/// Lines a flow printed, collected across tasks.
final class Said: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}
