import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

@testable import LatchkeyCLI

/// The emulator's whole scenarios against a running server: a person removes the app at
/// Facebook, a person asks for their data to be deleted, each sent to the callback URLs the app
/// registered, as Facebook would.
@Suite("Emulator scenarios against the server")
struct EmulatorScenarioTests {
    /// Has the emulator play `scenario` for `user` of the demo app.
    static func play(_ stack: Stack, _ scenario: String, user: String = "alice") async throws -> JSONValue {
        try await stack.emulator(
            "/_emulator/scenarios/" + scenario, ["app_id": .string(Demo.appID), "user": .string(user)])
    }

    @Test("remove-app ends alice's session and her token; request-deletion is answered, its page shown, its code kept")
    func removeThenDelete() async throws {
        try await Stack.run(browsable: true) { stack in
            let server = stack.serverURL.absoluteString
            let registered = try await stack.emulator(
                "/_emulator/apps/\(Demo.appID)/callbacks",
                [
                    "deauthorize_callback_url": .string(server + ServerConfiguration.facebookDeauthorizePath),
                    "data_deletion_callback_url": .string(server + ServerConfiguration.facebookDataDeletionPath),
                ])
            #expect(registered["deauthorize_callback_url"] == .string(server + "/v1/facebook/deauthorize"))
            let token = try await stack.facebookToken("alice")
            let signedIn = try await stack.signIn(["accessToken": .string(token)]).json()
            let userID = try #require(signedIn["user"]?["id"]?.stringValue)
            let bearer = try #require(signedIn["session"]?["access_token"]?.stringValue)

            // Alice removes the app in her Facebook settings.
            let removed = try await Self.play(stack, "remove-app")
            #expect(removed["removed"] == true && removed["tokens_revoked"] == 1, "\(removed)")
            #expect(removed["callback"]?["status"] == 200)
            let me = try await stack.emulatorGET("/v21.0/me?access_token=" + token)
            #expect(me["error"]?["code"] == 190 && me["error"]?["error_subcode"] == 458)
            #expect(try await stack.get("/v1/users/me", bearer: bearer).errorCode == "session_revoked")

            // Then asks for her data to be deleted.
            let first = try await Self.play(stack, "request-deletion")
            #expect(first["valid_response"] == true, "\(first)")
            let code = try #require(first["confirmation_code"]?.stringValue)
            #expect(first["status_url"] == .string(server + "/v1/facebook/data-deletion/" + code))
            let page = try #require(first["status_page"])
            #expect(page["status"] == 200)
            #expect(page["content_type"]?.stringValue?.hasPrefix("text/html") == true)
            #expect(page["body"]?.stringValue?.contains("In progress") == true)

            await stack.jobs().runOnce()
            #expect(try await stack.store.user(id: userID) == nil)
            // Asked again once it was carried out: the same request, the same code, now done.
            let again = try await Self.play(stack, "request-deletion")
            #expect(again["confirmation_code"] == .string(code))
            #expect(again["status_page"]?["body"]?.stringValue?.contains("Done") == true)
        }
    }

    @Test("serve --dev registers the server's callback URLs on the demo app, in a seed the emulator accepts")
    func devModeRegistersCallbacks() throws {
        var configuration = ServerConfiguration()
        configuration.http.publicURL = "https://login.example/"
        let seed = DevMode.seed(configuration)
        #expect(seed.apps[0].deauthorizeCallbackURL == "https://login.example/v1/facebook/deauthorize")
        #expect(seed.apps[0].dataDeletionCallbackURL == "https://login.example/v1/facebook/data-deletion")
        #expect(seed.apps[0].redirectURIs.contains("https://login.example/v1/oauth/facebook/callback"))
        #expect(seed.apps[1].deauthorizeCallbackURL == nil)
        try seed.validate()
    }
}
