import Crypto
import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyServer
import LatchkeyShared
import Testing

@Suite("Limited Login id-token exchange")
struct LimitedLoginTests {
    @Test("an id token whose claim is the SHA-256 of the raw nonce signs in with it, and maps claims like Graph fields")
    func rawNonce() async throws {
        try await Stack.run({ $0.users.clientMappableProperties = nil }) { stack in
            let token = try await stack.idToken(scopes: ["email", "user_gender"])
            let response = try await stack.signIn([
                "idToken": .string(token), "nonce": "raw-nonce-123",
                "fieldsMapping": ["gender": "gender", "email": "email"],
            ])
            #expect(response.status == .ok)
            let body = try response.json()
            #expect(body["isNewUser"] == true)
            #expect(body["user"]?["properties"] == ["gender": "female", "email": "alice@example.com"])
            #expect(body["grantedPermissions"] == ["email", "public_profile", "user_gender"])
            // The same person through classic login is the same user.
            let classic = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).json()
            #expect(classic["user"]?["id"] == body["user"]?["id"])
        }
    }

    @Test("the nonce claim may be the SHA-256 hex of the raw nonce (Firebase's convention)")
    func hashedNonce() async throws {
        try await Stack.run { stack in
            let raw = "firebase-style-raw-nonce"
            let hashed = SHA256.hash(data: Data(raw.utf8)).map { String(format: "%02x", $0) }.joined()
            let token = try await stack.idToken(nonce: hashed)
            #expect(try await stack.signIn(["idToken": .string(token), "nonce": .string(raw)]).status == .ok)
        }
    }

    @Test("a replayed id token is refused")
    func replay() async throws {
        try await Stack.run { stack in
            let token = try await stack.idToken()
            #expect(try await stack.signIn(["idToken": .string(token), "nonce": "raw-nonce-123"]).status == .ok)
            let again = try await stack.signIn(["idToken": .string(token), "nonce": "raw-nonce-123"])
            #expect(again.errorCode == "id_token_replayed")
        }
    }

    @Test("nonce mismatch and missing nonce are refused")
    func nonceErrors() async throws {
        try await Stack.run { stack in
            let token = try await stack.idToken()
            #expect(
                try await stack.signIn(["idToken": .string(token), "nonce": "other"]).errorCode == "nonce_mismatch")
            #expect(try await stack.signIn(["idToken": .string(token)]).errorCode == "nonce_mismatch")
            let noNonce = try await stack.idToken(nonce: nil)
            #expect(try await stack.signIn(["idToken": .string(noNonce)]).errorCode == "nonce_mismatch")
        }
    }

    @Test("tokens without a nonce pass only when configured to")
    func allowMissingNonce() async throws {
        try await Stack.run({ $0.signIn.allowMissingNonce = true }) { stack in
            let noNonce = try await stack.idToken(nonce: nil)
            #expect(try await stack.signIn(["idToken": .string(noNonce)]).status == .ok)
        }
    }

    @Test(
        "each broken id token is refused with its own code",
        arguments: [
            ("wrong_audience", "id_token_wrong_audience"), ("legacy_issuer", "id_token_wrong_issuer"),
            ("wrong_issuer", "id_token_wrong_issuer"), ("expired", "id_token_expired"),
            ("stale_iat", "id_token_iat_invalid"),
            ("future_iat", "id_token_iat_invalid"), ("unknown_kid", "id_token_unknown_key"),
            ("missing_kid", "id_token_invalid"),
            ("alg_none", "id_token_invalid"), ("alg_hs256", "id_token_invalid"), ("bad_signature", "id_token_invalid"),
            ("missing_nonce", "nonce_mismatch"), ("missing_jti", "id_token_invalid"),
        ])
    func defects(defect: String, code: String) async throws {
        try await Stack.run { stack in
            let token = try await stack.idToken(defect: defect)
            let response = try await stack.signIn(["idToken": .string(token), "nonce": "raw-nonce-123"])
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == code)
        }
    }

    @Test("the legacy issuer passes when configured")
    func legacyIssuerAllowed() async throws {
        try await Stack.run({ $0.facebook.issuers = ["https://www.facebook.com", "https://facebook.com"] }) { stack in
            let token = try await stack.idToken(defect: "legacy_issuer")
            #expect(try await stack.signIn(["idToken": .string(token), "nonce": "raw-nonce-123"]).status == .ok)
        }
    }

    @Test("after Facebook rotates keys, a token with the new kid triggers one JWKS refetch")
    func keyRotation() async throws {
        try await Stack.run { stack in
            #expect(
                try await stack.signIn(["idToken": .string(try await stack.idToken()), "nonce": "raw-nonce-123"]).status
                    == .ok)
            _ = try await stack.emulator("/_emulator/keys/rotate", [:])
            // Within the refetch interval the new kid is unknown; after it, the keys are fetched again.
            let early = try await stack.signIn([
                "idToken": .string(try await stack.idToken()), "nonce": "raw-nonce-123",
            ])
            #expect(early.errorCode == "id_token_unknown_key")
            stack.clock.advance(61)
            let later = try await stack.signIn([
                "idToken": .string(try await stack.idToken()), "nonce": "raw-nonce-123",
            ])
            #expect(later.status == .ok)
        }
    }

    @Test("server-issued nonces are single use when required")
    func serverNonces() async throws {
        try await Stack.run({ $0.signIn.requireServerNonce = true }) { stack in
            let issued = try await stack.post("/v1/auth/nonce", json: [:]).json()
            let nonce = try #require(issued["nonce"]?.stringValue)
            #expect(issued["expiresIn"] == 600)
            let first = try await stack.idToken(nonce: Demo.nonceClaim(nonce))
            #expect(try await stack.signIn(["idToken": .string(first), "nonce": .string(nonce)]).status == .ok)
            let second = try await stack.idToken(nonce: Demo.nonceClaim(nonce))
            #expect(
                try await stack.signIn(["idToken": .string(second), "nonce": .string(nonce)]).errorCode
                    == "nonce_invalid")
            let madeUp = try await stack.idToken(nonce: Demo.nonceClaim("client-made-up"))
            #expect(
                try await stack.signIn(["idToken": .string(madeUp), "nonce": "client-made-up"]).errorCode
                    == "nonce_invalid")
            // Never issued by us, whatever the store can hold (PostgreSQL's text refuses NUL).
            for odd in ["nul\u{0}byte", "with space", "ünïcode"] {
                let token = try await stack.idToken(nonce: Demo.nonceClaim(odd))
                let answer = try await stack.signIn(["idToken": .string(token), "nonce": .string(odd)])
                #expect(answer.status == .unauthorized && answer.errorCode == "nonce_invalid", "\(odd)")
            }
        }
    }

    @Test(
        "LATCHKEY_LIMITED_LOGIN_NONCE: what each mode takes, and an intercepted id token alone signs in under none by default",
        arguments: [
            // mode, server nonces, the claim is the hash of what is sent, accepted
            (IDTokenPolicy.NonceMatching.hashed, false, true, true),
            (.hashed, false, false, false),
            (.either, false, true, true),
            (.either, false, false, true),
            (.raw, true, true, false),
            (.raw, true, false, true),
        ])
    func nonceModes(
        mode: IDTokenPolicy.NonceMatching, serverNonce: Bool, hashedClaim: Bool, accepted: Bool
    )
        async throws
    {
        try await Stack.run({
            $0.signIn.limitedLoginNonce = mode
            $0.signIn.requireServerNonce = serverNonce
        }) { stack in
            var raw = "app-kept-raw-nonce"
            if serverNonce {
                raw = try #require(try await stack.post("/v1/auth/nonce", json: [:]).json()["nonce"]?.stringValue)
            }
            let token = try await stack.idToken(nonce: hashedClaim ? Demo.nonceClaim(raw) : raw)
            let answer = try await stack.signIn(["idToken": .string(token), "nonce": .string(raw)])
            #expect(
                accepted ? answer.status == .ok : answer.errorCode == "nonce_mismatch", "\(answer.errorCode ?? "ok")")
            // `either` without server nonces takes an intercepted token: the start says so.
            let warned = stack.logs.all.contains { $0.contains("latchkey.limited_login.nonce_either") }
            #expect(warned == (mode == .either && !serverNonce))
        }
    }

    @Test("by default, an intercepted, unused id token cannot be sent with its own claim as the nonce")
    func interceptedToken() async throws {
        try await Stack.run { stack in
            // The app gave Facebook SHA-256(raw) and keeps raw; the attacker has only the token.
            let token = try await stack.idToken(nonce: Demo.nonceClaim("only-the-app-knows-this"))
            let payload = try #require(Base64URL.decode(token.split(separator: ".")[1]))
            let claim = try #require(try JSONValue.decode(payload)["nonce"]?.stringValue)
            let stolen = try await stack.signIn(["idToken": .string(token), "nonce": .string(claim)])
            #expect(stolen.errorCode == "nonce_mismatch")
            // The app itself still signs in with it: the refusal spent nothing.
            let app = try await stack.signIn(["idToken": .string(token), "nonce": "only-the-app-knows-this"])
            #expect(app.status == .ok)
        }
    }

    @Test("raw mode needs server nonces, and a mode is spelt out")
    func nonceModeSettings() throws {
        var configuration = ServerConfiguration()
        #expect(configuration.signIn.limitedLoginNonce == .hashed)
        configuration = try ServerConfiguration(settings: [
            "LATCHKEY_LIMITED_LOGIN_NONCE": "raw", "LATCHKEY_FACEBOOK_APP_ID": Demo.appID,
            "LATCHKEY_FACEBOOK_APP_SECRET": Demo.secret, "LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS": "true",
        ])
        #expect(configuration.signIn.limitedLoginNonce == .raw)
        #expect { try configuration.validate() } throws: { "\($0)".contains("LATCHKEY_REQUIRE_SERVER_NONCE=true") }
        configuration.signIn.requireServerNonce = true
        try configuration.validate()
        #expect { _ = try ServerConfiguration(settings: ["LATCHKEY_LIMITED_LOGIN_NONCE": "sha256"]) } throws: {
            "\($0)".contains("hashed, raw or either")
        }
    }
}
