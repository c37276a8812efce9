import Crypto
import FacebookEmulator
import LatchkeyServer

/// `latchkey serve --dev`: the emulator's demo app and URLs, and a login to copy and paste.
enum DevMode {
    static var demoApp: EmulatorApp { EmulatorSeed.demo.apps[0] }

    /// The OAuth client `latchkey login` uses by default.
    static let cliClientID = "latchkey-cli"

    /// The demo world, with this server's URLs registered on the demo app whatever port it runs
    /// on, as a developer enters them in the app's dashboard: the login callback (Facebook matches
    /// redirect URIs exactly), and the deauthorize and data-deletion callbacks the emulator's
    /// scenarios post to.
    static func seed(_ configuration: ServerConfiguration) -> EmulatorSeed {
        var seed = EmulatorSeed.demo
        let callbackURL = configuration.facebookCallbackURL
        if !seed.apps[0].redirectURIs.contains(callbackURL) { seed.apps[0].redirectURIs.append(callbackURL) }
        seed.apps[0].deauthorizeCallbackURL = configuration.facebookDeauthorizeURL
        seed.apps[0].dataDeletionCallbackURL = configuration.facebookDataDeletionURL
        return seed
    }

    /// Points the server at the emulator, unless the operator set a value explicitly.
    static func apply(to settings: inout [String: String], emulatorPort: Int) {
        let base = "http://127.0.0.1:\(emulatorPort)"
        let defaults = [
            "LATCHKEY_FACEBOOK_APP_ID": demoApp.id, "LATCHKEY_FACEBOOK_APP_SECRET": demoApp.secret,
            "LATCHKEY_FACEBOOK_GRAPH_URL": "\(base)/v21.0",
            "LATCHKEY_FACEBOOK_JWKS_URL": "\(base)/.well-known/oauth/openid/jwks/",
            "LATCHKEY_FACEBOOK_DIALOG_URL": "\(base)/v21.0/dialog/oauth",
            "LATCHKEY_DATABASE_URL": "latchkey-data/latchkey-dev.sqlite",
            // The emulator binds alongside the server, so its credentials are checked just after start.
            "LATCHKEY_FACEBOOK_STARTUP_CHECK": "background",
            // A development database holds throw-away keys; production refuses this without saying so.
            "LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS": "true",
            // Guests, so the identities flows can be tried at once.
            "LATCHKEY_ANONYMOUS_USERS": "on",
            // Sign in with Apple against the emulator's Apple, with a team key made for this run
            // (the emulator, in this process, is told its public half).
            "LATCHKEY_APPLE_CLIENT_IDS": AppleRegistration.demoClientIDs.joined(separator: ","),
            "LATCHKEY_APPLE_TEAM_ID": AppleRegistration.demoTeamID,
            "LATCHKEY_APPLE_KEY_ID": AppleRegistration.demoKeyID,
            "LATCHKEY_APPLE_PRIVATE_KEY": P256.Signing.PrivateKey().pemRepresentation,
            "LATCHKEY_APPLE_URL": base,
            // Easy Login clients: `latchkey login` and the demo app's URL scheme.
            "LATCHKEY_OAUTH_CLIENTS":
                "\(cliClientID)=http://127.0.0.1/callback,latchkey-demo=latchkeydemo://auth,latchkey-demo=http://127.0.0.1/callback",
        ]
        // Apple's settings go together: an operator's own Apple configuration is left whole.
        let operatorsApple = settings.keys.contains { $0.hasPrefix("LATCHKEY_APPLE_CLIENT_IDS") }
        for (name, value) in defaults where settings[name] == nil && settings[name + "_FILE"] == nil {
            if operatorsApple, name.hasPrefix("LATCHKEY_APPLE_") { continue }
            settings[name] = value
        }
    }

    /// The emulator's registration of the server's Apple team, when Sign in with Apple points at
    /// the emulator: its public key checks the client secrets the server signs, and Apple's
    /// notifications go to the server.
    static func appleRegistration(_ configuration: ServerConfiguration, emulatorPort: Int) -> AppleRegistration? {
        let apple = configuration.apple
        guard apple.isEnabled, apple.url.hasPrefix("http://127.0.0.1:\(emulatorPort)"), let teamID = apple.teamID,
            let keyID = apple.keyID, let key = apple.privateKey
        else { return nil }
        return AppleRegistration(
            teamID: teamID, keyID: keyID, publicKey: key.publicKey, clientIDs: apple.clientIDs,
            notificationURL: configuration.http.resolvedPublicURL + "/v1/apple/notifications")
    }

    /// The SHA-256 hex of the raw nonce `n` the banner's Apple example sends.
    static let appleDemoNonceClaim = "1b16b1df538ba12dc3f97edbb85caa7050d46c148134290feba80f8236c83db9"

    static func banner(serverURL: String, emulatorPort: Int, database: String) -> String {
        let emulator = "http://127.0.0.1:\(emulatorPort)"
        return """
            Latchkey (dev) listening on \(serverURL), Facebook emulator on \(emulator)
            \(database)
            Demo app \(demoApp.id); demo users: alice, bob, carol (no email), dave.

            Log in as alice with a classic Facebook token:
              TOKEN=$(curl -s -X POST \(emulator)/_emulator/tokens -H 'content-type: application/json' \\
                -d '{"app_id":"\(demoApp.id)","user":"alice","scopes":["email"]}' | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')
              curl -s -X POST \(serverURL)/v1/auth/facebook -H 'content-type: application/json' \\
                -d "{\\"accessToken\\":\\"$TOKEN\\"}"

            Or sign in through the browser (Easy Login), as a desktop app would:
              swift run --package-path Server latchkey login --server \(serverURL)

            Or with Apple, as the device would get it (the nonce claim is the SHA-256 hex of "n"):
              curl -s -X POST \(emulator)/_emulator/apple/authorizations -H 'content-type: application/json' \\
                -d '{"user":"alice","client_id":"\(AppleRegistration.demoClientIDs[0])","nonce":"\(appleDemoNonceClaim)"}'
              then POST its identity_token, authorization_code and "nonce":"n" to \(serverURL)/v1/auth/apple

            Facebook's callbacks to this server, as when alice removes the app or asks for her data to be deleted:
              curl -s -X POST \(emulator)/_emulator/scenarios/remove-app -H 'content-type: application/json' \\
                -d '{"app_id":"\(demoApp.id)","user":"alice"}'
              curl -s -X POST \(emulator)/_emulator/scenarios/request-deletion -H 'content-type: application/json' \\
                -d '{"app_id":"\(demoApp.id)","user":"alice"}'
            """
    }
}
