import Foundation
import HummingbirdTesting
import Testing

@testable import FacebookEmulator

@Suite("Token endpoint /oauth/access_token")
struct TokenEndpointTests {
    /// Runs the dialog for `user` and returns the code.
    static func code(
        _ emulator: EmulatorClient, user: String = "alice", scope: String = "email", extra: [(String, String)] = []
    ) async throws -> String {
        let response = try await emulator.get(
            EmulatorClient.path(
                "/dialog/oauth",
                [("client_id", Demo.appID), ("redirect_uri", Demo.redirect), ("scope", scope), ("emulator_user", user)]
                    + extra))
        return try #require(try response.redirectParameters().parameters["code"])
    }

    static func exchange(
        _ emulator: EmulatorClient, code: String, redirect: String = Demo.redirect, secret: String? = Demo.secret,
        verifier: String? = nil, usePOST: Bool = false
    ) async throws -> TestResponse {
        var query = [("client_id", Demo.appID), ("redirect_uri", redirect), ("code", code)]
        if let secret { query.append(("client_secret", secret)) }
        if let verifier { query.append(("code_verifier", verifier)) }
        if usePOST {
            return try await emulator.post(
                "/v21.0/oauth/access_token", form: query + [("grant_type", "authorization_code")])
        }
        return try await emulator.get(EmulatorClient.path("/v21.0/oauth/access_token", query))
    }

    @Test("a code exchanges once for a ~60-day bearer token; openid adds an id_token")
    func exchangeCode() async throws {
        try await withEmulator { emulator in
            let code = try await Self.code(emulator, scope: "openid,email", extra: [("nonce", "n-123")])
            let response = try await Self.exchange(emulator, code: code)
            #expect(response.status == .ok)
            let body = try response.json()
            #expect(body["token_type"] == "bearer")
            #expect(body["expires_in"] == 5_184_000)
            let token = try #require(body["access_token"]?.stringValue)
            #expect(token.hasPrefix("EAA"))
            let idToken = try JWTParts(try #require(body["id_token"]?.stringValue))
            #expect(idToken.payload["nonce"] == "n-123")
            #expect(idToken.payload["sub"] == .string(Demo.id("alice")))
            let data = try await emulator.debug(token)
            #expect(data["is_valid"] == true)
            #expect(data["user_id"] == .string(Demo.id("alice")))

            let reused = try await Self.exchange(emulator, code: code).graphError()
            #expect(reused.code == 100 && reused.subcode == 36009)
            #expect(reused.message == "This authorization code has been used.")
        }
    }

    @Test("form POST with grant_type=authorization_code works too")
    func exchangeWithPOST() async throws {
        try await withEmulator { emulator in
            let code = try await Self.code(emulator)
            let response = try await Self.exchange(emulator, code: code, usePOST: true)
            #expect(response.status == .ok)
            #expect(try response.json()["id_token"] == nil)
        }
    }

    @Test("redirect_uri mismatch is 100/36008, a wrong secret is code 1, an unknown app is 101")
    func exchangeErrors() async throws {
        try await withEmulator { emulator in
            let code = try await Self.code(emulator)
            let mismatch = try await Self.exchange(emulator, code: code, redirect: "latchkeydemo://other")
            #expect(mismatch.status == .badRequest)
            let mismatchError = try mismatch.graphError()
            #expect(
                mismatchError.code == 100 && mismatchError.subcode == 36008 && mismatchError.type == "OAuthException")
            let wrongSecret = try await Self.exchange(emulator, code: code, secret: "nope").graphError()
            #expect(wrongSecret.code == 1 && wrongSecret.message == "Error validating client secret.")
            // Failed attempts do not spend the code.
            #expect(try await Self.exchange(emulator, code: code).status == .ok)
            let unknownApp = try await emulator.get(
                EmulatorClient.path(
                    "/oauth/access_token",
                    [("client_id", "5"), ("client_secret", "x"), ("code", code), ("redirect_uri", Demo.redirect)]))
            #expect(try unknownApp.graphError().code == 101)
            let garbage = try await Self.exchange(emulator, code: "AQnot-a-code").graphError()
            #expect(garbage.code == 100 && garbage.message == "Invalid verification code format.")
        }
    }

    @Test("an expired code is 100/36007 once the emulator's clock moves past ten minutes")
    func expiredCode() async throws {
        try await withEmulator { emulator in
            let code = try await Self.code(emulator)
            try await emulator.post("/_emulator/clock", json: ["advance_seconds": 601])
            let error = try await Self.exchange(emulator, code: code).graphError()
            #expect(error.code == 100 && error.subcode == 36007)
        }
    }

    @Test("PKCE: S256 and plain verifiers replace the secret; a wrong verifier fails")
    func pkce() async throws {
        try await withEmulator { emulator in
            let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
            let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  // RFC 7636 appendix B
            let s256 = try await Self.code(
                emulator, extra: [("code_challenge", challenge), ("code_challenge_method", "S256")])
            let wrong = try await Self.exchange(emulator, code: s256, secret: nil, verifier: verifier + "x")
            #expect(try wrong.graphError().code == 100)
            #expect(try await Self.exchange(emulator, code: s256, secret: nil, verifier: verifier).status == .ok)

            let plain = try await Self.code(
                emulator, extra: [("code_challenge", verifier), ("code_challenge_method", "plain")])
            #expect(try await Self.exchange(emulator, code: plain, secret: nil, verifier: verifier).status == .ok)

            // A code bound to a challenge needs the verifier, even from a client that knows the secret.
            let noVerifier = try await Self.code(
                emulator, extra: [("code_challenge", challenge), ("code_challenge_method", "S256")])
            let missing = try await Self.exchange(emulator, code: noVerifier).graphError()
            #expect(missing.code == 100 && missing.message == "Missing code_verifier parameter.")
            // A verifier for a code that had no challenge is refused too.
            let unbound = try await Self.code(emulator)
            #expect(try await Self.exchange(emulator, code: unbound, verifier: verifier).graphError().code == 100)
            // Without secret or verifier, the secret is what is missing.
            let bare = try await Self.code(emulator)
            let noSecret = try await Self.exchange(emulator, code: bare, secret: nil).graphError()
            #expect(noSecret.message == "Missing client_secret parameter.")
        }
    }

    @Test("client_credentials issues an app token that debug_token accepts")
    func clientCredentials() async throws {
        try await withEmulator { emulator in
            let response = try await emulator.get(
                EmulatorClient.path(
                    "/oauth/access_token",
                    [("grant_type", "client_credentials"), ("client_id", Demo.appID), ("client_secret", Demo.secret)]))
            let appToken = try #require(try response.json()["access_token"]?.stringValue)
            #expect(appToken.hasPrefix("\(Demo.appID)|"))
            let user = try await emulator.mintToken()
            let debug = try await emulator.get(
                EmulatorClient.path("/debug_token", [("input_token", user), ("access_token", appToken)]))
            #expect(try debug.json()["data"]?["is_valid"] == true)
            let appData = try await emulator.debug(appToken)
            #expect(appData["type"] == "APP")
            #expect(appData["is_valid"] == true)
        }
    }

    @Test("fb_extend_sso_token extends a user token and reports expires_at")
    func extendSSOToken() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken(lifetime: 3600)
            let response = try await emulator.get(
                EmulatorClient.path(
                    "/v2.0/oauth/access_token", [("grant_type", "fb_extend_sso_token"), ("access_token", token)]))
            let body = try response.json()
            #expect(body["expires_at"] == .int(1_800_000_000 + 5_184_000))
            #expect(body["graph_domain"] == "facebook")
            let proofApp = try await emulator.mintToken(app: Demo.proofAppID)
            let refused = try await emulator.get(
                EmulatorClient.path(
                    "/oauth/access_token", [("grant_type", "fb_extend_sso_token"), ("access_token", proofApp)]))
            #expect(try refused.graphError().message == "API calls from the server require an appsecret_proof argument")
        }
    }

    @Test("fb_exchange_token returns a new long-lived token; an expired one cannot be exchanged")
    func longLivedExchange() async throws {
        try await withEmulator { emulator in
            let short = try await emulator.mintToken(lifetime: 3600)
            let query = [
                ("grant_type", "fb_exchange_token"), ("client_id", Demo.appID), ("client_secret", Demo.secret),
                ("fb_exchange_token", short),
            ]
            let response = try await emulator.get(EmulatorClient.path("/oauth/access_token", query))
            let body = try response.json()
            #expect(body["expires_in"] == 5_184_000)
            #expect(body["access_token"]?.stringValue != short)
            try await emulator.post("/_emulator/clock", json: ["advance_seconds": 3601])
            let expired = try await emulator.get(EmulatorClient.path("/oauth/access_token", query)).graphError()
            #expect(expired.code == 190 && expired.subcode == 463)
        }
    }
}
