import Foundation
import LatchkeyServer
import Testing

extension ConfigurationTests {
    static func withClients(_ value: String) throws -> ServerConfiguration {
        try ServerConfiguration(settings: [
            "LATCHKEY_FACEBOOK_APP_ID": "1", "LATCHKEY_FACEBOOK_APP_SECRET": "s", "LATCHKEY_OAUTH_CLIENTS": value,
            "LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS": "true",
        ])
    }

    @Test("LATCHKEY_OAUTH_CLIENTS: one entry per redirect URI, grouped by client")
    func oauthClients() throws {
        let configuration = try Self.withClients(
            "ios=myapp://auth, ios=http://127.0.0.1/callback,web=https://app.example.com/cb?x=1")
        #expect(
            configuration.easyLogin.clients == [
                OAuthClient(id: "ios", redirectURIs: ["myapp://auth", "http://127.0.0.1/callback"]),
                OAuthClient(id: "web", redirectURIs: ["https://app.example.com/cb?x=1"]),
            ])
        try configuration.validate()
        #expect(try ServerConfiguration(settings: [:]).easyLogin.clients.isEmpty)
    }

    @Test(
        "redirect URIs that could never be safe are refused at start",
        arguments: [
            "app=http://app.example.com/cb", "app=https://app.example.com/cb#x", "app=https://user@app.example.com/",
            "app=not a uri", "bad id=myapp://auth", "app", "=myapp://auth", "app=/relative",
        ])
    func unsafeClients(value: String) {
        #expect(throws: ConfigurationError.self) { try Self.withClients(value).validate() }
    }
}
