import Crypto
import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyShared
import Testing

@testable import FacebookEmulator

/// Ways a client secret can be wrong, each of which Apple answers with `invalid_client`.
enum BadSecret: String, CaseIterable, Sendable {
    case signature, kid, issuer, audience, subject, unregisteredClient, expired, tooLong, future, notAJWT

    func secret(_ team: AppleTeam) throws -> (clientID: String, secret: String) {
        let bundle = AppleTeam.bundleID
        let now = AppleTeam.now
        switch self {
        case .signature: return (bundle, try team.clientSecret(signingKey: P256.Signing.PrivateKey()))
        case .kid: return (bundle, try team.clientSecret(kid: "OTHERKEY01"))
        case .issuer: return (bundle, try team.clientSecret(issuer: "OTHERTEAM1"))
        case .audience: return (bundle, try team.clientSecret(audience: "https://account.apple.com"))
        case .subject: return (bundle, try team.clientSecret(subject: AppleTeam.servicesID))
        case .unregisteredClient: return ("com.example.other", try team.clientSecret(clientID: "com.example.other"))
        case .expired: return (bundle, try team.clientSecret(issuedAt: now - 7200, expiresAt: now - 1))
        case .tooLong: return (bundle, try team.clientSecret(issuedAt: now - 10, expiresAt: now - 10 + 15_777_001))
        case .future: return (bundle, try team.clientSecret(issuedAt: now + 120, expiresAt: now + 3600))
        case .notAJWT: return (bundle, "not-a-jwt")
        }
    }
}

@Suite("Sign in with Apple: /auth/token and /auth/revoke")
struct AppleTokenEndpointTests {
    @Test("a code is exchanged for tokens; the refresh grant gives no new refresh token")
    func exchangeAndRefresh() async throws {
        try await withAppleEmulator { emulator, team in
            let authorization = try await emulator.appleAuthorization([
                "user": "alice", "client_id": .string(AppleTeam.servicesID), "nonce": "hashed",
            ])
            let code = try #require(authorization["authorization_code"]?.stringValue)
            let response = try await emulator.appleToken([
                ("client_id", AppleTeam.servicesID),
                ("client_secret", try team.clientSecret(clientID: AppleTeam.servicesID)),
                ("grant_type", "authorization_code"), ("code", code),
            ])
            #expect(response.status == .ok)
            #expect(response.headers[.init("x-fb-trace-id")!] == nil)
            let tokens = try response.json()
            #expect(tokens["token_type"] == "Bearer" && tokens["expires_in"] == 3600)
            let access = try #require(tokens["access_token"]?.stringValue)
            let refresh = try #require(tokens["refresh_token"]?.stringValue)
            let idToken = try JWTParts(try #require(tokens["id_token"]?.stringValue))
            #expect(try await emulator.verifiesWithApple(idToken))
            #expect(idToken.payload["sub"] == authorization["user"])
            #expect(idToken.payload["aud"] == .string(AppleTeam.servicesID))
            #expect(idToken.payload["nonce"] == "hashed")
            let digest = SHA256.hash(data: Data(access.utf8))
            #expect(idToken.payload["at_hash"] == .string(Base64URL.encode(Data(digest.prefix(16)))))

            let refreshed = try await emulator.appleToken([
                ("client_id", AppleTeam.servicesID),
                ("client_secret", try team.clientSecret(clientID: AppleTeam.servicesID)),
                ("grant_type", "refresh_token"), ("refresh_token", refresh),
            ])
            #expect(refreshed.status == .ok)
            let renewed = try refreshed.json()
            #expect(renewed["refresh_token"] == nil && renewed["access_token"] != nil)
            #expect(renewed["token_type"] == "Bearer" && renewed["expires_in"] == 3600)
            let renewedID = try JWTParts(try #require(renewed["id_token"]?.stringValue))
            #expect(renewedID.payload["sub"] == authorization["user"] && renewedID.payload["nonce"] == nil)

            let listed = try await emulator.get("/_emulator/apple/tokens").json()
            #expect(
                listed["tokens"] == [
                    [
                        "refresh_token": .string(refresh), "client_id": .string(AppleTeam.servicesID),
                        "user": try #require(authorization["user"]), "revoked": false, "revoked_at": .null,
                        "revoked_by": .null,
                    ]
                ])
            #expect(try await emulator.get("/_emulator/calls").json()["calls"]?["/auth/token"] == 2)
        }
    }

    @Test("a bad client secret is invalid_client", arguments: BadSecret.allCases)
    func invalidClient(bad: BadSecret) async throws {
        try await withAppleEmulator { emulator, team in
            let authorization = try await emulator.appleAuthorization([
                "user": "alice", "client_id": .string(AppleTeam.bundleID),
            ])
            let (clientID, secret) = try bad.secret(team)
            let response = try await emulator.appleToken([
                ("client_id", clientID), ("client_secret", secret), ("grant_type", "authorization_code"),
                ("code", try #require(authorization["authorization_code"]?.stringValue)),
            ])
            #expect(response.status == .badRequest)
            #expect(try response.json() == ["error": "invalid_client"])
            let revoke = try await emulator.post(
                "/auth/revoke", form: [("client_id", clientID), ("client_secret", secret), ("token", "x")])
            #expect(revoke.status == .badRequest)
            #expect(try revoke.json() == ["error": "invalid_client"])
        }
    }

    @Test("a secret at the limits is accepted: six months exactly, iat a minute ahead")
    func secretLimits() async throws {
        try await withAppleEmulator { emulator, team in
            let now = AppleTeam.now
            for secret in [
                try team.clientSecret(issuedAt: now, expiresAt: now + 15_777_000),
                try team.clientSecret(issuedAt: now + 60, expiresAt: now + 3600),
            ] {
                let response = try await emulator.post(
                    "/auth/revoke",
                    form: [("client_id", AppleTeam.bundleID), ("client_secret", secret), ("token", "junk")])
                #expect(response.status == .ok)
            }
        }
    }

    @Test("missing parameters and unknown grant types")
    func invalidRequest() async throws {
        try await withAppleEmulator { emulator, team in
            let secret = try team.clientSecret()
            let cases: [([(String, String)], String)] = [
                ([("client_secret", secret), ("grant_type", "authorization_code"), ("code", "c")], "invalid_request"),
                ([("client_id", AppleTeam.bundleID), ("grant_type", "authorization_code")], "invalid_request"),
                (
                    [
                        ("client_id", AppleTeam.bundleID), ("client_secret", secret),
                        ("grant_type", "authorization_code"),
                    ],
                    "invalid_request"
                ),
                (
                    [("client_id", AppleTeam.bundleID), ("client_secret", secret), ("grant_type", "refresh_token")],
                    "invalid_request"
                ),
                (
                    [("client_id", AppleTeam.bundleID), ("client_secret", secret), ("grant_type", "password")],
                    "unsupported_grant_type"
                ),
            ]
            for (form, error) in cases {
                let response = try await emulator.appleToken(form)
                #expect(response.status == .badRequest)
                #expect(try response.json()["error"] == .string(error))
            }
        }
    }

    @Test("a code is refused when reused, expired, another client's, redirected elsewhere or its consent ended")
    func invalidGrant() async throws {
        try await withAppleEmulator { emulator, team in
            func exchange(
                _ code: String, clientID: String = AppleTeam.bundleID, redirect: String? = nil
            ) async throws
                -> TestResponse
            {
                var form = [
                    ("client_id", clientID), ("client_secret", try team.clientSecret(clientID: clientID)),
                    ("grant_type", "authorization_code"), ("code", code),
                ]
                if let redirect { form.append(("redirect_uri", redirect)) }
                return try await emulator.appleToken(form)
            }
            func code(
                _ body: JSONValue = ["user": "alice", "client_id": .string(AppleTeam.bundleID)]
            ) async throws
                -> String
            {
                try #require(try await emulator.appleAuthorization(body)["authorization_code"]?.stringValue)
            }
            func expectInvalidGrant(_ response: TestResponse) throws {
                #expect(response.status == .badRequest)
                #expect(try response.json()["error"] == "invalid_grant")
            }

            let reused = try await code()
            #expect(try await exchange(reused).status == .ok)
            try expectInvalidGrant(try await exchange(reused))

            try expectInvalidGrant(try await exchange("c0000.0.abcd.unknown"))
            try expectInvalidGrant(try await exchange(try await code(), clientID: AppleTeam.servicesID))

            let web = try await code([
                "user": "alice", "client_id": .string(AppleTeam.bundleID), "redirect_uri": "https://example.com/cb",
            ])
            try expectInvalidGrant(try await exchange(web, redirect: "https://example.com/other"))
            #expect(try await exchange(web, redirect: "https://example.com/cb").status == .ok)

            let revokedSince = try await code()
            _ = try await emulator.post(
                "/_emulator/apple/notifications", json: ["user": "alice", "type": "consent-revoked", "deliver": false])
            try expectInvalidGrant(try await exchange(revokedSince))

            // Five minutes on Apple's clock (the emulator's, moved through the control API); the
            // client secret, good for an hour, still is.
            let late = try await code()
            _ = try await emulator.post("/_emulator/clock", json: ["advance_seconds": 300])
            let response = try await exchange(late)
            #expect(
                try response.json() == [
                    "error": "invalid_grant", "error_description": "The code has expired or has been revoked.",
                ])
        }
    }

    @Test("a refresh token works only for its client id and only while live")
    func refreshRefusals() async throws {
        try await withAppleEmulator { emulator, team in
            let tokens = try await emulator.appleExchange(team: team)
            let refresh = try #require(tokens["refresh_token"]?.stringValue)
            func renew(clientID: String) async throws -> TestResponse {
                try await emulator.appleToken([
                    ("client_id", clientID), ("client_secret", try team.clientSecret(clientID: clientID)),
                    ("grant_type", "refresh_token"), ("refresh_token", refresh),
                ])
            }
            #expect(try await renew(clientID: AppleTeam.servicesID).json()["error"] == "invalid_grant")
            #expect(try await renew(clientID: AppleTeam.bundleID).status == .ok)
            let revoked = try await emulator.post(
                "/_emulator/apple/tokens/revoke", json: ["refresh_token": .string(refresh)])
            #expect(try revoked.json() == ["revoked": 1])
            let refused = try await renew(clientID: AppleTeam.bundleID)
            #expect(refused.status == .badRequest)
            #expect(try refused.json()["error"] == "invalid_grant")
            let unknown = try await emulator.post("/_emulator/apple/tokens/revoke", json: ["refresh_token": "r-nope"])
            #expect(unknown.status == .notFound)
        }
    }

    @Test("revocation answers 200 for any token, revokes a live one and ends the authorization")
    func revoke() async throws {
        try await withAppleEmulator { emulator, team in
            let tokens = try await emulator.appleExchange(team: team)
            let refresh = try #require(tokens["refresh_token"]?.stringValue)
            func revoke(
                _ token: String, clientID: String = AppleTeam.bundleID, hint: String? = "refresh_token"
            )
                async throws -> TestResponse
            {
                var form = [
                    ("client_id", clientID), ("client_secret", try team.clientSecret(clientID: clientID)),
                    ("token", token),
                ]
                if let hint { form.append(("token_type_hint", hint)) }
                return try await emulator.post("/auth/revoke", form: form)
            }
            let junk = try await revoke("junk")
            #expect(junk.status == .ok && junk.body.readableBytes == 0)
            // Another client id's token is invalid for this client: 200, and it stays live.
            #expect(try await revoke(refresh, clientID: AppleTeam.servicesID).status == .ok)
            #expect(
                try await emulator.get("/_emulator/apple/tokens").json()["tokens"]?.arrayValue?.first?["revoked"]
                    == false)

            _ = try await emulator.post("/_emulator/clock", json: ["advance_seconds": 42])
            #expect(try await revoke(refresh, hint: nil).status == .ok)
            let listed = try await emulator.get("/_emulator/apple/tokens").json()
            let entry = try #require(listed["tokens"]?.arrayValue?.first)
            #expect(entry["revoked"] == true && entry["revoked_at"] == 1_800_000_042 && entry["revoked_by"] == "revoke")
            #expect(listed["access_tokens"]?.arrayValue?.first?["revoked_by"] == "authorization_ended")
            // Already revoked: 200 again. The next authorization shows the name again (TN3194).
            #expect(try await revoke(refresh).status == .ok)
            let next = try await emulator.appleAuthorization([
                "user": "alice", "client_id": .string(AppleTeam.bundleID),
            ])
            #expect(next["full_name"]?["given_name"] == "Alice")
            #expect(try await revoke("x", hint: "id_token").json() == ["error": "invalid_request"])
        }
    }

    @Test("faults make Apple fail or stall in Apple's shape and are counted")
    func faults() async throws {
        try await withAppleEmulator { emulator, team in
            let down = try await emulator.post(
                "/_emulator/faults", json: ["endpoint": "/auth/token", "code": 1, "status": 503, "count": 1])
            #expect(down.status == .ok)
            let response = try await emulator.appleToken([
                ("client_id", AppleTeam.bundleID), ("client_secret", try team.clientSecret()),
                ("grant_type", "authorization_code"), ("code", "c"),
            ])
            #expect(response.status == .serviceUnavailable)
            #expect(try response.json() == ["error": "temporarily_unavailable"])

            _ = try await emulator.post(
                "/_emulator/faults", json: ["endpoint": "/auth/revoke", "apple_error": "invalid_client", "count": 1])
            let refused = try await emulator.post(
                "/auth/revoke",
                form: [("client_id", AppleTeam.bundleID), ("client_secret", try team.clientSecret()), ("token", "t")])
            #expect(refused.status == .badRequest)
            #expect(try refused.json() == ["error": "invalid_client"])

            _ = try await emulator.post(
                "/_emulator/faults",
                json: ["endpoint": "/auth/keys", "preset": "server_error", "latency_ms": 5, "count": 1])
            let keys = try await emulator.get("/auth/keys")
            #expect(keys.status == .internalServerError)
            #expect(try keys.json() == ["error": "server_error"])
            #expect(try await emulator.get("/auth/keys").status == .ok)

            let calls = try await emulator.get("/_emulator/calls").json()["calls"]
            #expect(calls?["/auth/token"] == 1 && calls?["/auth/revoke"] == 1 && calls?["/auth/keys"] == 2)
        }
    }
}
