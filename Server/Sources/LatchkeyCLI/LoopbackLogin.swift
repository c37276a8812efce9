import AsyncHTTPClient
import Foundation
import LatchkeyCore

/// `latchkey login`'s flow, apart from its flags so tests can drive it with their own browser:
/// loopback receiver, Easy Login URL, browser, redirect, session saved.
enum LoopbackLogin {
    /// Signs in through the browser and returns the user; the session is saved in `store`.
    /// - Parameters:
    ///   - openBrowser: shows the URL to the person (the real command prints it and tries the
    ///     desktop's browser; tests drive one).
    ///   - say: progress for the person (never tokens).
    static func run(
        server: URL, clientID: String, permissions: [String], fieldsMapping: [String: String]?,
        store: any CredentialStore, timeout: Duration, openBrowser: @escaping @Sendable (URL) async -> Void,
        say: @escaping @Sendable (String) -> Void
    ) async throws -> LatchkeyUser {
        try await LoginPreflight.check(server: server, clientID: clientID)
        return try await LoopbackReceiver.run { redirectURI, next in
            let client = LatchkeyClient(
                configuration: LatchkeyConfiguration(
                    serverURL: server, facebookAppID: "", credentialStore: store,
                    transport: AsyncHTTPClientTransport(client: .shared), oauthClientID: clientID,
                    redirectURI: redirectURI))
            let url = try await client.makeEasyLoginURL(fieldsMapping: fieldsMapping, permissions: permissions)
            say("Sign in with Facebook in your browser:\n  \(url.absoluteString)\nWaiting for the browser…")
            let deadline = ContinuousClock.now + timeout
            await openBrowser(url)
            // Anything local may call the port; a request without this attempt's state is
            // ignored (the SDK keeps the attempt), and the wait goes on until the deadline.
            do {
                while true {
                    let redirect = try await next(deadline)
                    if let user = try await Self.attempt(client, redirect) { return user }
                    say("Ignored a request to the loopback port that was not this sign-in.")
                }
            } catch {
                // The port closes with this process: nothing can finish the attempt, so the
                // store does not keep it (the SDK keeps attempts for apps a redirect relaunches).
                await client.cancelEasyLogin()
                throw error
            }
        }
    }

    /// The user, or `nil` when `redirect` does not carry this attempt's state (someone else's request).
    private static func attempt(_ client: LatchkeyClient, _ redirect: URL) async throws -> LatchkeyUser? {
        do {
            return try await client.handleOpenURL(redirect)
        } catch  where error.code == "state_mismatch" {
            return nil
        }
    }
}
