import Foundation
import Latchkey

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
        try await LoopbackReceiver.run { redirectURI, next in
            let client = LatchkeyClient(
                configuration: LatchkeyConfiguration(
                    serverURL: server, facebookAppID: "", credentialStore: store, oauthClientID: clientID,
                    redirectURI: redirectURI))
            let url = try await client.easyLoginWithFacebook(fieldsMapping: fieldsMapping, permissions: permissions)
            say("Sign in with Facebook in your browser:\n  \(url.absoluteString)\nWaiting for the browser…")
            await openBrowser(url)
            let redirect = try await next(timeout)
            return try await client.handleOpenURL(redirect)
        }
    }
}
