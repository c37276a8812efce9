import Crypto
import FacebookEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyShared
import Testing

@testable import LatchkeyServer

/// Sign in with Apple end to end against the emulator's Apple: the name kept from the first
/// authorization, every id-token refusal, the code exchange and its failures, the refresh token
/// stored sealed.
@Suite("Sign in with Apple")
struct AppleSignInTests {
    @Test("the first sign-in keeps the name; a later one without it keeps it; the refresh token is stored")
    func firstThenLater() async throws {
        try await Stack.run(apple: true) { stack in
            let first = try await stack.appleCredential()
            #expect(first.givenName == "Alice" && first.familyName != nil, "Apple shares the name the first time")
            let response = try await stack.signInWithApple(first.body())
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let body = try response.json()
            #expect(body["isNewUser"] == true)
            let user = try #require(body["user"])
            #expect(user["properties"]?["givenName"] == .string("Alice"))
            #expect(user["properties"]?["familyName"] == first.familyName.map(JSONValue.string))
            #expect(user["properties"]?["email"] == first.claims["email"])
            let identity = try #require(user["identities"]?.arrayValue?.first)
            #expect(identity["provider"] == "apple" && identity["subject"] == .string(first.subject))
            #expect(identity["appId"] == .string(AppleDemo.clientID))
            #expect(try IdentityTests.bearer(body).isEmpty == false)
            let state = try #require(try await stack.store.identityState(provider: "apple", subject: first.subject))
            #expect(state.tokenClientIDs == [AppleDemo.clientID])
            // Later: Apple sends no name, and the stored one stays.
            let later = try await stack.appleCredential()
            #expect(later.givenName == nil)
            let again = try await stack.signInWithApple(later.body())
            #expect(again.status == .ok)
            let returning = try again.json()
            #expect(returning["isNewUser"] == false && returning["user"]?["id"] == user["id"])
            #expect(returning["user"]?["properties"]?["givenName"] == "Alice")
            // The same credential again: Apple refuses its code (single use).
            let replay = try await stack.signInWithApple(later.body())
            #expect(replay.status == .badRequest && replay.errorCode == "apple_code_invalid")
        }
    }

    @Test(
        "every id token refusal is typed and spends nothing",
        arguments: [
            ("wrong_issuer", "id_token_wrong_issuer"), ("wrong_audience", "id_token_wrong_audience"),
            ("expired", "id_token_expired"), ("wrong_key", "id_token_invalid"),
            ("unknown_kid", "id_token_unknown_key"), ("bad_signature", "id_token_invalid"),
        ])
    func idTokenRefusals(defect: String, code: String) async throws {
        try await Stack.run(apple: true) { stack in
            let credential = try await stack.appleCredential(options: ["defect": .string(defect)])
            let response = try await stack.signInWithApple(credential.body())
            #expect(response.status == .unauthorized && response.errorCode == code, "\(defect)")
            // Nothing reached Apple's token endpoint, so the code still works with an honest token.
            let calls = try await stack.emulatorGET("/_emulator/calls")["calls"]
            #expect(calls?["/auth/token"] == nil, "\(defect)")
        }
    }

    @Test("the nonce: its SHA-256 hex in the token, the raw one sent; nonce_supported false may omit it")
    func nonces() async throws {
        try await Stack.run(apple: true) { stack in
            let credential = try await stack.appleCredential()
            let wrong = try await stack.signInWithApple(credential.body(nonce: "another-nonce"))
            #expect(wrong.status == .unauthorized && wrong.errorCode == "nonce_mismatch")
            // The claim itself sent as the nonce (an intercepted token) is refused too.
            let claim = try #require(credential.claims["nonce"]?.stringValue)
            let intercepted = try await stack.signInWithApple(credential.body(nonce: claim))
            #expect(intercepted.errorCode == "nonce_mismatch")
            var missing = credential.body().objectValue ?? [:]
            missing["nonce"] = nil
            #expect(try await stack.signInWithApple(.object(missing)).errorCode == "invalid_request")
            // A token without a nonce passes only when Apple says the device does not support one.
            let unsupported = try await stack.appleCredential(
                nonce: nil, options: ["defect": "no_nonce_supported_false"])
            #expect(try await stack.signInWithApple(unsupported.body()).status == .ok)
            let bare = try await stack.appleCredential(nonce: nil)
            #expect(try await stack.signInWithApple(bare.body()).errorCode == "nonce_mismatch")
        }
    }

    @Test("both issuers, string or boolean claims, no email, a private relay email")
    func claimShapes() async throws {
        try await Stack.run(apple: true) { stack in
            let account = try await stack.appleCredential(options: ["issuer": "https://account.apple.com"])
            #expect(try await stack.signInWithApple(account.body()).status == .ok)
        }
        try await Stack.run(apple: true) { stack in
            let strings = try await stack.appleCredential(
                "bob", options: ["claim_types": "string", "hide_email": true])
            #expect(strings.claims["is_private_email"] == "true")
            let response = try await stack.signInWithApple(strings.body())
            #expect(response.status == .ok)
            let email = try #require(try response.json()["user"]?["properties"]?["email"]?.stringValue)
            #expect(email.hasSuffix("@privaterelay.appleid.com"))
        }
        try await Stack.run(apple: true) { stack in
            let none = try await stack.appleCredential("carol", options: ["omit_email": true])
            let response = try await stack.signInWithApple(none.body())
            #expect(response.status == .ok)
            #expect(try response.json()["user"]?["properties"]?["email"] == nil)
        }
    }

    @Test("string claims become booleans in properties")
    func stringClaimsMapped() async throws {
        try await Stack.run(
            apple: true,
            { configuration in configuration.apple.fieldsMapping["is_private_email"] = "privateEmail" }
        ) { stack in
            let strings = try await stack.appleCredential(options: ["claim_types": "string", "hide_email": true])
            let response = try await stack.signInWithApple(strings.body())
            #expect(try response.json()["user"]?["properties"]?["privateEmail"] == true)
        }
    }

    @Test("a code exchange Apple refuses, a code of another token, Apple down, a refused client secret")
    func exchangeFailures() async throws {
        try await Stack.run(apple: true) { stack in
            // A code that expired (Apple: five minutes).
            let old = try await stack.appleCredential(options: ["lifetime_seconds": 3600])
            stack.clock.advance(301)
            let expired = try await stack.signInWithApple(old.body())
            #expect(expired.status == .badRequest && expired.errorCode == "apple_code_invalid")
            // Alice's token with Bob's code.
            let alice = try await stack.appleCredential()
            let bob = try await stack.appleCredential("bob")
            var mixed = alice.body().objectValue ?? [:]
            mixed["authorizationCode"] = .string(bob.code)
            let swapped = try await stack.signInWithApple(.object(mixed))
            #expect(swapped.status == .badRequest && swapped.errorCode == "apple_code_invalid")
            #expect(try await stack.store.identityState(provider: "apple", subject: alice.subject) == nil)
            // Apple down.
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "/auth/token", "code": 1, "status": 503, "count": 1])
            let fresh = try await stack.appleCredential()
            let down = try await stack.signInWithApple(fresh.body())
            #expect(down.status == .serviceUnavailable && down.errorCode == "apple_unavailable")
            #expect(down.headers[.retryAfter] != nil)
            #expect(try await stack.get("/ready").json()["apple"] == "unreachable")
        }
        // The server signs client secrets with a key Apple does not know: the operator's fault.
        try await Stack.run(
            apple: true,
            { configuration in configuration.apple.privateKey = .init(P256.Signing.PrivateKey()) }
        ) { stack in
            let credential = try await stack.appleCredential()
            let refused = try await stack.signInWithApple(credential.body())
            #expect(refused.status == .serviceUnavailable && refused.errorCode == "apple_unavailable")
            #expect(try await stack.get("/ready").json()["apple"] == "credentials_refused")
            #expect(stack.logs.all.contains { $0.contains("latchkey.apple.client_rejected") })
        }
    }

    @Test("Apple rotates its keys: a token under the new kid verifies once the key set is fetched again")
    func keyRotation() async throws {
        try await Stack.run(apple: true) { stack in
            #expect(try await stack.signInWithApple(try await stack.appleCredential().body()).status == .ok)
            _ = try await stack.emulator("/_emulator/apple/keys/rotate", [:])
            // An unknown kid refetches the keys, at most once a minute (a forged kid cannot make the
            // server hammer Apple).
            stack.clock.advance(61)
            let rotated = try await stack.signInWithApple(try await stack.appleCredential().body())
            #expect(rotated.status == .ok, "\(String(buffer: rotated.body))")
            let calls = try await stack.emulatorGET("/_emulator/calls")["calls"]
            #expect(calls?["/auth/keys"] == 2)
        }
    }

    @Test("the web flow: the code is exchanged with the authorization's redirect URI")
    func webFlow() async throws {
        try await Stack.run(apple: true) { stack in
            let redirect = "https://app.example.com/apple/callback"
            let without = try await stack.appleCredential(
                client: AppleDemo.webClientID, options: ["redirect_uri": .string(redirect)])
            let refused = try await stack.signInWithApple(without.body())
            #expect(refused.status == .badRequest && refused.errorCode == "apple_code_invalid")
            let web = try await stack.appleCredential(
                client: AppleDemo.webClientID, options: ["redirect_uri": .string(redirect)])
            var body = web.body().objectValue ?? [:]
            body["redirectUri"] = .string(redirect)
            let response = try await stack.signInWithApple(.object(body))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let identity = try response.json()["user"]?["identities"]?.arrayValue?.first
            #expect(identity?["appId"] == .string(AppleDemo.webClientID))
            body["redirectUri"] = "http://app.example.com/apple/callback"
            let plain = try await stack.signInWithApple(.object(body))
            #expect(plain.errorCode == "invalid_request")
        }
    }

    @Test("Apple's URL is https, or plain http to this machine only")
    func appleURL() throws {
        var configuration = ServerConfiguration()
        configuration.apple.url = "http://apple.example.com"
        #expect(throws: ConfigurationError.self) { try configuration.apple.validate { _, raw in raw } }
        configuration.apple.url = "http://127.0.0.1:8090"
        try configuration.apple.validate { _, raw in raw }
    }

    @Test("off unless configured: every Apple path is not found")
    func offByDefault() async throws {
        try await Stack.run { stack in
            let response = try await stack.post(
                "/v1/auth/apple", json: ["idToken": "x", "authorizationCode": "y", "nonce": "z"])
            #expect(response.status == .notFound && response.errorCode == "not_found")
            let notification = try await stack.post("/v1/apple/notifications", json: ["payload": "x"])
            #expect(notification.status == .notFound)
            #expect(try await stack.get("/ready").json()["apple"] == "off")
        }
    }

    @Test("the credential check: a good key is accepted, a wrong one reported")
    func credentialCheck() async throws {
        try await Stack.run(apple: true) { stack in
            let good = try #require(
                AppleClient(
                    configuration: stack.configuration, client: .shared, health: AppleHealth(enabled: true),
                    logger: .init(label: "test")))
            if case .failure(let refusal) = await good.checkCredentials(clientID: AppleDemo.clientID) {
                Issue.record("a good key was refused: \(refusal)")
            }
            var wrong = stack.configuration
            wrong.apple.privateKey = .init(P256.Signing.PrivateKey())
            let health = AppleHealth(enabled: true)
            let bad = try #require(
                AppleClient(configuration: wrong, client: .shared, health: health, logger: .init(label: "test")))
            guard case .failure(.invalidClient) = await bad.checkCredentials(clientID: AppleDemo.clientID) else {
                Issue.record("a wrong key was not refused")
                return
            }
            #expect(health.status == .credentialsRefused)
        }
    }
}
