import Crypto
import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyShared
import Testing
import X509
import _CryptoExtras

@testable import FacebookEmulator

@Suite("Limited Login: OIDC discovery, keys and id tokens")
struct OIDCTests {
    /// The JWKS as public keys by kid, built from `n` and `e` the way any JOSE library would.
    static func jwks(_ emulator: EmulatorClient) async throws -> [String: _RSA.Signing.PublicKey] {
        let body = try await emulator.get("/.well-known/oauth/openid/jwks/").json()
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for key in try #require(body["keys"]?.arrayValue) {
            #expect(key["kty"] == "RSA" && key["alg"] == "RS256" && key["use"] == "sig")
            let n = try #require(key["n"]?.stringValue.flatMap(Base64URL.decode))
            let e = try #require(key["e"]?.stringValue.flatMap(Base64URL.decode))
            keys[try #require(key["kid"]?.stringValue)] = try _RSA.Signing.PublicKey(n: n, e: e)
        }
        return keys
    }

    static func verifies(_ token: JWTParts, with key: _RSA.Signing.PublicKey) throws -> Bool {
        key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: token.signature),
            for: SHA256.hash(data: Data(token.signingInput.utf8)), padding: .insecurePKCS1v1_5)
    }

    static func mint(_ emulator: EmulatorClient, _ body: JSONValue) async throws -> JWTParts {
        let response = try await emulator.post("/_emulator/id-tokens", json: body)
        #expect(response.status == .ok)
        return try JWTParts(try #require(try response.json()["id_token"]?.stringValue))
    }

    @Test("discovery matches Facebook's document and points at this emulator")
    func discovery() async throws {
        try await withEmulator { emulator in
            for path in ["/.well-known/openid-configuration/", "/.well-known/openid-configuration"] {
                let body = try await emulator.get(path).json()
                #expect(body["issuer"] == "https://www.facebook.com")
                #expect(body["id_token_signing_alg_values_supported"] == ["RS256"])
                #expect(body["response_types_supported"] == ["id_token", "token id_token"])
                #expect(body["subject_types_supported"] == ["pairwise"])
                #expect(body["jwks_uri"]?.stringValue?.hasSuffix("/.well-known/oauth/openid/jwks/") == true)
                #expect(body["token_endpoint"] == nil)
            }
        }
    }

    @Test("JWKS, iOS certificates and Android keys publish the same key under the same kid")
    func sameKeyEverywhere() async throws {
        try await withEmulator { emulator in
            let jwks = try await Self.jwks(emulator)
            #expect(jwks.count == 1)
            let (kid, jwk) = try #require(jwks.first)
            #expect(kid.count == 40 && kid.allSatisfy(\.isHexDigit))
            let certs = try await emulator.get("/.well-known/oauth/openid/certs/").json()
            let pem = try #require(certs[kid]?.stringValue)
            let certificate = try Certificate(pemEncoded: pem)
            let certificateKey = try #require(_RSA.Signing.PublicKey(certificate.publicKey))
            #expect(certificateKey.derRepresentation == jwk.derRepresentation)
            let keys = try await emulator.get("/.well-known/oauth/openid/keys/").json()
            let spki = try _RSA.Signing.PublicKey(pemRepresentation: try #require(keys[kid]?.stringValue))
            #expect(spki.derRepresentation == jwk.derRepresentation)
        }
    }

    @Test("an id token has Facebook's header and claims, verifies against the JWKS, and agrees with /me")
    func honestToken() async throws {
        try await withEmulator { emulator in
            let token = try await Self.mint(
                emulator,
                [
                    "app_id": .string(Demo.appID), "user": "alice", "nonce": "abc 123",
                    "scopes": ["email", "user_age_range"],
                ])
            #expect(token.header["alg"] == "RS256" && token.header["typ"] == "JWT")
            let kid = try #require(token.header["kid"]?.stringValue)
            let key = try #require(try await Self.jwks(emulator)[kid])
            #expect(try Self.verifies(token, with: key))
            let claims = token.payload
            #expect(claims["iss"] == "https://www.facebook.com")
            #expect(claims["aud"] == .string(Demo.appID))
            #expect(claims["sub"] == .string(Demo.id("alice")))
            #expect(claims["iat"] == 1_800_000_000)
            #expect(claims["exp"] == 1_800_003_600)
            #expect(claims["nonce"] == "abc 123")
            let jti = try #require(claims["jti"]?.stringValue)
            #expect(jti.count == 69 && jti.dropFirst(4).first == ".")
            #expect(claims["email"] == "alice@example.com")
            #expect(claims["user_age_range"] == ["min": 21])
            #expect(claims["given_name"] == "Alice" && claims["family_name"] == "Liddell")
            #expect(claims["user_birthday"] == nil && claims["user_location"] == nil)
        }
    }

    @Test("without a nonce the claim is the empty string; claims follow granted permissions")
    func noNonceAndGating() async throws {
        try await withEmulator { emulator in
            let token = try await Self.mint(
                emulator,
                [
                    "app_id": .string(Demo.appID), "user": "bob",
                    "scopes": ["user_birthday", "user_location", "user_gender", "user_hometown", "user_link"],
                ])
            #expect(token.payload["nonce"] == "")
            #expect(token.payload["email"] == nil)
            #expect(token.payload["user_birthday"] == "12/24")
            #expect(token.payload["user_location"] == ["id": "110714572282163", "name": "Kingston, Jamaica"])
            #expect(token.payload["user_gender"] == "male")
            #expect(token.payload["user_hometown"] == nil)  // Bob has none
            #expect(token.payload["middle_name"] == "Marley")
        }
    }

    @Test("rotation signs with a new kid and keeps the previous key published")
    func rotation() async throws {
        try await withEmulator { emulator in
            let before = try await Self.mint(emulator, ["app_id": .string(Demo.appID), "user": "alice"])
            let rotated = try await emulator.post("/_emulator/keys/rotate").json()
            let active = try #require(rotated["active"]?.stringValue)
            #expect(active != before.header["kid"]?.stringValue)
            let after = try await Self.mint(emulator, ["app_id": .string(Demo.appID), "user": "alice"])
            #expect(after.header["kid"]?.stringValue == active)
            let jwks = try await Self.jwks(emulator)
            #expect(jwks.count == 2)
            for token in [before, after] {
                let kid = try #require(token.header["kid"]?.stringValue)
                let key = try #require(jwks[kid])
                #expect(try Self.verifies(token, with: key))
            }
            // A third rotation retires the oldest key.
            _ = try await emulator.post("/_emulator/keys/rotate")
            let latest = try await Self.jwks(emulator)
            let oldest = try #require(before.header["kid"]?.stringValue)
            #expect(latest.count == 2 && latest[oldest] == nil)
        }
    }

    @Test("added keys are published before they sign; keys can be retired but not the last one")
    func addAndRemoveKeys() async throws {
        try await withEmulator { emulator in
            let added = try await emulator.post("/_emulator/keys").json()
            let kids = (added["keys"]?.arrayValue ?? []).compactMap { $0.stringValue }
            #expect(kids.count == 2 && added["active"]?.stringValue == kids[0])
            let removed = try await emulator.delete("/_emulator/keys/\(kids[1])")
            #expect(try removed.json()["keys"] == [.string(kids[0])])
            let last = try await emulator.delete("/_emulator/keys/\(kids[0])")
            #expect(last.status == .notFound)
            // A pre-published key is the one rotation promotes.
            let addedAgain = try await emulator.post("/_emulator/keys").json()
            let pending = try #require(addedAgain["keys"]?.arrayValue?.last?.stringValue)
            let rotated = try await emulator.post("/_emulator/keys/rotate").json()
            #expect(rotated == ["active": .string(pending), "keys": [.string(pending), .string(kids[0])]])
        }
    }

    @Test("each defect breaks exactly what it names", arguments: IDTokenDefect.allCases)
    func defects(defect: IDTokenDefect) async throws {
        try await withEmulator { emulator in
            let token = try await Self.mint(
                emulator,
                ["app_id": .string(Demo.appID), "user": "alice", "nonce": "n", "defect": .string(defect.rawValue)])
            let jwks = try await Self.jwks(emulator)
            let kid = token.header["kid"]?.stringValue
            let key = kid.flatMap { jwks[$0] }
            let signatureValid = try key.map { try Self.verifies(token, with: $0) } ?? false
            let claims = token.payload
            let iat = claims["iat"]?.intValue ?? 0
            switch defect {
            case .wrongAudience: #expect(claims["aud"] != .string(Demo.appID) && signatureValid)
            case .legacyIssuer: #expect(claims["iss"] == "https://facebook.com" && signatureValid)
            case .wrongIssuer: #expect(claims["iss"] == "https://accounts.example.com" && signatureValid)
            case .expired: #expect((claims["exp"]?.intValue ?? .max) < 1_800_000_000 && signatureValid)
            case .staleIssuedAt:
                #expect(iat < 1_800_000_000 - 600 && (claims["exp"]?.intValue ?? 0) > 1_800_000_000 && signatureValid)
            case .futureIssuedAt: #expect(iat > 1_800_000_000 && signatureValid)
            case .unknownKid: #expect(kid != nil && key == nil)
            case .missingKid: #expect(kid == nil)
            case .algorithmNone: #expect(token.header["alg"] == "none" && token.signature.isEmpty)
            case .algorithmHS256: #expect(token.header["alg"] == "HS256" && !signatureValid)
            case .badSignature: #expect(key != nil && !signatureValid)
            case .missingNonce: #expect(claims["nonce"] == nil && signatureValid)
            case .missingJTI: #expect(claims["jti"] == nil && signatureValid)
            }
        }
    }

    @Test("unknown defects and users are control errors with codes")
    func controlErrors() async throws {
        try await withEmulator { emulator in
            let badDefect = try await emulator.post(
                "/_emulator/id-tokens", json: ["app_id": .string(Demo.appID), "user": "alice", "defect": "sparkly"])
            #expect(try badDefect.json()["error"]?["code"] == "invalid_field")
            let badUser = try await emulator.post(
                "/_emulator/id-tokens", json: ["app_id": .string(Demo.appID), "user": "zed"])
            #expect(badUser.status == .notFound)
            #expect(try badUser.json()["error"]?["code"] == "unknown_user")
        }
    }
}
