import Crypto
import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyShared
import Testing

@testable import FacebookEmulator

@Suite("Sign in with Apple: authorizations, identity tokens and keys")
struct AppleTests {
    @Test("an identity token verifies against /auth/keys and carries Apple's claims")
    func identityToken() async throws {
        try await withAppleEmulator { emulator, _ in
            let answer = try await emulator.appleAuthorization([
                "user": "alice", "client_id": .string(AppleTeam.bundleID), "nonce": "5e1b0c-hashed-nonce",
            ])
            let token = try JWTParts(try #require(answer["identity_token"]?.stringValue))
            #expect(token.header["alg"] == "RS256")
            let kid = try #require(token.header["kid"]?.stringValue)
            #expect(kid.count == 7 && kid.allSatisfy { $0.isLetter || $0.isNumber })
            #expect(try await emulator.verifiesWithApple(token))
            let sub = appleSubject(teamID: AppleRegistration.demoTeamID, personKey: "alice")
            let claims = token.payload
            #expect(claims == answer["claims"])
            #expect(claims["iss"] == "https://appleid.apple.com")
            #expect(claims["aud"] == .string(AppleTeam.bundleID))
            #expect(claims["sub"] == .string(sub) && answer["user"] == .string(sub))
            #expect(claims["iat"] == 1_800_000_000 && claims["exp"] == 1_800_000_600)
            #expect(claims["auth_time"] == 1_800_000_000)
            #expect(claims["nonce"] == "5e1b0c-hashed-nonce" && claims["nonce_supported"] == true)
            #expect(claims["email"] == "alice@example.com")
            #expect(claims["email_verified"] == true && claims["is_private_email"] == false)
            #expect(claims["real_user_status"] == 2)
            let code = try #require(answer["authorization_code"]?.stringValue)
            let digest = SHA256.hash(data: Data(code.utf8))
            #expect(claims["c_hash"] == .string(Base64URL.encode(Data(digest.prefix(16)))))
            // Facebook's keys are not Apple's.
            let facebook = try await emulator.get("/.well-known/oauth/openid/jwks/").json()
            #expect(facebook["keys"]?.arrayValue?.contains { $0["kid"] == .string(kid) } == false)
        }
    }

    @Test("the sub has Apple's shape and is the same for every client id of the team, and per team")
    func subjects() async throws {
        let sub = appleSubject(teamID: "LKDEVTEAM1", personKey: "alice")
        let parts = sub.split(separator: ".").map(String.init)
        #expect(parts.count == 3 && parts[0].count == 6 && parts[1].count == 32 && parts[2].count == 4)
        #expect(parts[0].allSatisfy(\.isNumber) && parts[2].allSatisfy(\.isNumber))
        #expect(parts[1].allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(sub == appleSubject(teamID: "LKDEVTEAM1", personKey: "alice"))
        #expect(sub != appleSubject(teamID: "OTHERTEAM1", personKey: "alice"))
        try await withAppleEmulator { emulator, _ in
            let bundle = try await emulator.appleAuthorization([
                "user": "bob", "client_id": .string(AppleTeam.bundleID),
            ])
            let web = try await emulator.appleAuthorization(["user": "bob", "client_id": .string(AppleTeam.servicesID)])
            #expect(bundle["user"] == web["user"])
            #expect(web["claims"]?["aud"] == .string(AppleTeam.servicesID))
            // The control API also takes the sub instead of the key.
            let bySub = try await emulator.appleAuthorization([
                "user": try #require(bundle["user"]), "client_id": .string(AppleTeam.bundleID),
            ])
            #expect(bySub["user"] == bundle["user"])
        }
    }

    @Test("the name and email come only with the first authorization; the email claim stays")
    func nameOnlyOnce() async throws {
        try await withAppleEmulator { emulator, _ in
            let first = try await emulator.appleAuthorization([
                "user": "alice", "client_id": .string(AppleTeam.bundleID),
            ])
            #expect(first["full_name"] == ["given_name": "Alice", "family_name": "Liddell"])
            #expect(first["email"] == "alice@example.com")
            // The team's other client id shares the authorization: no sheet, no name.
            let second = try await emulator.appleAuthorization([
                "user": "alice", "client_id": .string(AppleTeam.servicesID),
            ])
            #expect(second["full_name"] == .null && second["email"] == .null)
            #expect(second["claims"]?["email"] == "alice@example.com")
            // Consent revoked at Apple: the next authorization shows the sheet again.
            let notified = try await emulator.post(
                "/_emulator/apple/notifications", json: ["user": "alice", "type": "consent-revoked", "deliver": false])
            #expect(notified.status == .ok)
            let third = try await emulator.appleAuthorization([
                "user": "alice", "client_id": .string(AppleTeam.bundleID),
            ])
            #expect(third["full_name"]?["given_name"] == "Alice")
        }
    }

    @Test("Hide My Email, string claims, no email, another issuer, scopes")
    func variants() async throws {
        try await withAppleEmulator { emulator, _ in
            let hidden = try await emulator.appleAuthorization([
                "user": "bob", "client_id": .string(AppleTeam.bundleID), "hide_email": true, "claim_types": "string",
                "issuer": "https://account.apple.com",
            ])
            let relay = try #require(hidden["email"]?.stringValue)
            let local = try #require(relay.split(separator: "@").first)
            #expect(relay.hasSuffix("@privaterelay.appleid.com") && local.count == 10)
            #expect(local.allSatisfy { ($0.isLetter && $0.isLowercase) || $0.isNumber })
            let claims = try #require(hidden["claims"])
            #expect(claims["email"] == .string(relay))
            #expect(claims["email_verified"] == "true" && claims["is_private_email"] == "true")
            #expect(claims["iss"] == "https://account.apple.com")
            // The choice made on the sheet stays: the relay again, later and without the flag.
            let later = try await emulator.appleAuthorization([
                "user": "bob", "client_id": .string(AppleTeam.bundleID), "omit_email": true,
            ])
            #expect(later["claims"]?["email"] == nil && later["claims"]?["is_private_email"] == nil)
            let again = try await emulator.appleAuthorization(["user": "bob", "client_id": .string(AppleTeam.bundleID)])
            #expect(again["claims"]?["email"] == .string(relay))
            // Carol has no email of her own: only the relay can be shared.
            let carol = try await emulator.appleAuthorization([
                "user": "carol", "client_id": .string(AppleTeam.bundleID),
            ])
            #expect(carol["email"]?.stringValue?.hasSuffix("@privaterelay.appleid.com") == true)
            // Name only: no email anywhere, a name; space-separated scopes are accepted.
            let named = try await emulator.appleAuthorization([
                "user": "dave", "client_id": .string(AppleTeam.bundleID), "scopes": "name",
                "lifetime_seconds": 60,
            ])
            #expect(named["email"] == .null && named["claims"]?["email"] == nil)
            #expect(named["full_name"]?["family_name"] == "Teen")
            #expect(named["claims"]?["exp"] == 1_800_000_060)
        }
    }

    @Test("each defect breaks exactly what it names", arguments: AppleIDTokenDefect.allCases)
    func defects(defect: AppleIDTokenDefect) async throws {
        try await withAppleEmulator { emulator, _ in
            let answer = try await emulator.appleAuthorization([
                "user": "alice", "client_id": .string(AppleTeam.bundleID), "nonce": "n",
                "defect": .string(defect.rawValue),
            ])
            let token = try JWTParts(try #require(answer["identity_token"]?.stringValue))
            let keys = try await emulator.appleKeys()
            let published = token.header["kid"]?.stringValue.flatMap { keys[$0] } != nil
            let valid = try await emulator.verifiesWithApple(token)
            let claims = token.payload
            switch defect {
            case .wrongKey: #expect(published && !valid)
            case .unknownKid: #expect(!published)
            case .expired: #expect((claims["exp"]?.intValue ?? .max) < 1_800_000_000 && valid)
            case .wrongAudience: #expect(claims["aud"] != .string(AppleTeam.bundleID) && valid)
            case .wrongIssuer: #expect(claims["iss"] != "https://appleid.apple.com" && valid)
            case .noNonceSupportedFalse: #expect(claims["nonce"] == nil && claims["nonce_supported"] == false && valid)
            case .badSignature: #expect(published && !valid)
            }
        }
    }

    @Test("control errors: unknown user, client id, scope, defect; Apple unconfigured")
    func controlErrors() async throws {
        try await withAppleEmulator { emulator, _ in
            for (body, code) in [
                (["user": "zed", "client_id": .string(AppleTeam.bundleID)], "unknown_user"),
                (["user": "alice", "client_id": "com.example.other"], "invalid_field"),
                (["user": "alice", "client_id": .string(AppleTeam.bundleID), "scopes": ["phone"]], "invalid_field"),
                (["user": "alice", "client_id": .string(AppleTeam.bundleID), "defect": "sparkly"], "invalid_field"),
                (["user": "alice"], "missing_field"),
            ] as [(JSONValue, String)] {
                let response = try await emulator.post("/_emulator/apple/authorizations", json: body)
                #expect(try response.json()["error"]?["code"] == .string(code))
            }
        }
        try await withEmulator { emulator in
            let control = try await emulator.post(
                "/_emulator/apple/authorizations", json: ["user": "alice", "client_id": "com.example.latchkey"])
            #expect(control.status == .notFound)
            #expect(try control.json()["error"]?["code"] == "apple_not_configured")
            // Without a registration Apple's paths are unknown paths like any other.
            let keys = try await emulator.get("/auth/keys")
            #expect(try keys.graphError().code == 2500)
            #expect(try await emulator.get("/_emulator").json()["apple"] == nil)
        }
    }

    @Test("rotation publishes a new signing key beside the old; keys can be retired but not the signing one")
    func rotation() async throws {
        try await withAppleEmulator { emulator, _ in
            let before = try await emulator.get("/_emulator/apple/keys").json()
            let old = try #require(before["active"]?.stringValue)
            let rotated = try await emulator.post("/_emulator/apple/keys/rotate").json()
            let active = try #require(rotated["active"]?.stringValue)
            #expect(active != old && rotated["keys"] == [.string(active), .string(old)])
            let answer = try await emulator.appleAuthorization([
                "user": "alice", "client_id": .string(AppleTeam.bundleID),
            ])
            let token = try JWTParts(try #require(answer["identity_token"]?.stringValue))
            #expect(token.header["kid"] == .string(active))
            #expect(try await emulator.appleKeys().count == 2)
            #expect(try await emulator.delete("/_emulator/apple/keys/\(active)").status == .notFound)
            let removed = try await emulator.delete("/_emulator/apple/keys/\(old)")
            #expect(try removed.json()["keys"] == [.string(active)])
            #expect(try await emulator.appleKeys().keys.sorted() == [active])
        }
    }

    @Test("the overview lists the team, its client ids and each person's sub")
    func overview() async throws {
        try await withAppleEmulator { emulator, _ in
            let apple = try #require(try await emulator.get("/_emulator").json()["apple"])
            #expect(apple["team_id"] == "LKDEVTEAM1" && apple["key_id"] == "LKDEVKEY01")
            #expect(apple["client_ids"] == ["com.example.latchkey", "com.example.latchkey.web"])
            let alice = try #require(apple["users"]?.arrayValue?.first { $0["key"] == "alice" })
            #expect(alice["sub"] == .string(appleSubject(teamID: "LKDEVTEAM1", personKey: "alice")))
        }
    }

    @Test("a registration Apple's portal would not hold is refused at start")
    func validation() throws {
        let key = P256.Signing.PrivateKey().publicKey
        let bad = [
            AppleRegistration(teamID: "short", keyID: "LKDEVKEY01", publicKey: key, clientIDs: ["a"]),
            AppleRegistration(teamID: "LKDEVTEAM1", keyID: "lkdevkey01", publicKey: key, clientIDs: ["a"]),
            AppleRegistration(teamID: "LKDEVTEAM1", keyID: "LKDEVKEY01", publicKey: key, clientIDs: []),
            AppleRegistration(
                teamID: "LKDEVTEAM1", keyID: "LKDEVKEY01", publicKey: key, clientIDs: ["a"], notificationURL: "ftp://x"),
        ]
        for registration in bad {
            #expect(throws: EmulatorConfigurationError.self) {
                try EmulatorConfiguration(apple: registration).validate()
            }
        }
        let good = AppleRegistration(
            teamID: AppleRegistration.demoTeamID, keyID: AppleRegistration.demoKeyID, publicKey: key,
            clientIDs: AppleRegistration.demoClientIDs, notificationURL: "https://example.com/apple")
        #expect(throws: Never.self) { try EmulatorConfiguration(apple: good).validate() }
    }
}
