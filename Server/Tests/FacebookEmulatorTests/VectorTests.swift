import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyCrypto
import ServerTestVectors
import Testing

@testable import FacebookEmulator

/// The emulator against the shared vectors (Tests/Vectors): given the vector key it publishes the
/// vector JWK, and what it signs passes the shared checks the server and the SDK run.
@Suite("Emulator against the shared crypto vectors")
struct EmulatorVectorTests {
    @Test("seeded with the vector key, the emulator publishes the vector JWK and signs tokens the shared checks take")
    func vectorKey() async throws {
        let rsa = try #require(Vectors.document["rsa"])
        let pem = try #require(rsa["private_key_pem"]?.stringValue)
        try await withEmulator({ configuration in
            configuration.seed.signingKeys = [pem]
            configuration.clock = { Vectors.now }
        }) { emulator in
            let jwks = try await emulator.get("/.well-known/oauth/openid/jwks/").json()
            #expect(jwks["keys"] == [rsa["jwk"] ?? .null])
            let response = try await emulator.post(
                "/_emulator/id-tokens",
                json: [
                    "app_id": .string(Demo.appID), "user": "alice",
                    "nonce": .string(Vectors.document["nonce"]?.stringValue ?? ""),
                ])
            let token = try LimitedLoginToken(try #require(try response.json()["id_token"]?.stringValue))
            try token.verifySignature(with: RSAJWK.signingKeys(in: jwks)[token.kid])
            let claims = try token.claims(
                policy: .device(appID: Demo.appID), nonce: Vectors.document["nonce"]?.stringValue, now: Vectors.now)
            #expect(!claims.subject.isEmpty)
        }
    }

    @Test("appsecret_proof vectors are what the emulator demands", arguments: Vectors.cases("appsecret_proof"))
    func proof(vector: JSONValue) throws {
        let token = try #require(vector["access_token"]?.stringValue)
        let secret = try #require(vector["app_secret"]?.stringValue)
        #expect(AppSecretProof.isValid(try #require(vector["proof"]?.stringValue), accessToken: token, secret: secret))
    }

    @Test("every tampered signed request the emulator makes fails shared verification, the honest one passes")
    func tampering() throws {
        let payload: JSONValue = ["algorithm": "HMAC-SHA256", "user_id": "42", "issued_at": 1_800_000_000]
        let (honest, _) = SignedRequest.make(payload: payload, secret: "s", tampering: nil)
        #expect(try SignedRequest.verify(honest, secret: "s") == payload)
        for tampering in SignedRequest.Tampering.allCases {
            let (spoiled, _) = SignedRequest.make(payload: payload, secret: "s", tampering: tampering)
            #expect(throws: SignedRequest.Failure.self, "\(tampering)") {
                try SignedRequest.verify(spoiled, secret: "s")
            }
        }
    }
}
