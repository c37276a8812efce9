import Foundation
import LatchkeyAPI
import TestVectors
import Testing

@testable import LatchkeyCrypto

@Suite("Shared vectors: PKCE, appsecret_proof, signed_request")
struct PrimitiveVectorTests {
    @Test("PKCE S256 challenges match the RFC and Python", arguments: Vectors.cases("pkce"))
    func pkce(vector: JSONValue) throws {
        let verifier = try #require(vector["verifier"]?.stringValue)
        let challenge = try #require(vector["challenge"]?.stringValue)
        #expect(PKCE.challenge(for: verifier) == challenge)
        #expect(PKCE.isWellFormed(verifier) && PKCE.isValidS256Challenge(challenge))
        #expect(PKCE.verify(verifier: verifier, challenge: challenge, method: .s256))
        #expect(!PKCE.verify(verifier: verifier + "A", challenge: challenge, method: .s256))
        #expect(!PKCE.verify(verifier: verifier, challenge: challenge, method: .plain))
    }

    @Test("made verifiers are well formed and differ")
    func madeVerifiers() {
        let verifiers = (0..<50).map { _ in PKCE.makeVerifier() }
        #expect(verifiers.allSatisfy(PKCE.isWellFormed))
        #expect(Set(verifiers).count == verifiers.count)
        #expect(!PKCE.isWellFormed(String(repeating: "a", count: 42)))
        #expect(!PKCE.isWellFormed(String(repeating: "a", count: 129)))
        #expect(!PKCE.isWellFormed(String(repeating: "a", count: 42) + "+"))
    }

    @Test("appsecret_proof is Python's HMAC-SHA256 hex", arguments: Vectors.cases("appsecret_proof"))
    func appSecretProof(vector: JSONValue) throws {
        let token = try #require(vector["access_token"]?.stringValue)
        let secret = try #require(vector["app_secret"]?.stringValue)
        let proof = try #require(vector["proof"]?.stringValue)
        #expect(AppSecretProof.compute(accessToken: token, secret: secret) == proof)
        #expect(AppSecretProof.isValid(proof.uppercased(), accessToken: token, secret: secret))
        #expect(!AppSecretProof.isValid(proof, accessToken: token + "x", secret: secret))
    }

    @Test("signed requests verify, or fail for the named reason", arguments: Vectors.cases("signed_requests"))
    func signedRequest(vector: JSONValue) throws {
        let signed = try #require(vector["signed_request"]?.stringValue)
        let secret = try #require(vector["secret"]?.stringValue)
        let expected = try #require(vector["expect"]?.stringValue)
        let outcome: String
        do {
            let payload = try SignedRequest.verify(signed, secret: secret)
            #expect(payload == vector["payload"], "\(vector["name"] ?? "")")
            outcome = "ok"
        } catch {
            outcome = "\(error)"
        }
        #expect(outcome == expected, "\(vector["name"] ?? "")")
    }

    @Test("a signed request we sign is one we verify, and its MAC is Python's")
    func signedRoundTrip() throws {
        let payload: JSONValue = ["algorithm": "HMAC-SHA256", "user_id": "42", "issued_at": 1]
        let signed = SignedRequest.sign(payload: payload, secret: "key")
        #expect(try SignedRequest.verify(signed, secret: "key") == payload)
        #expect(throws: SignedRequest.Failure.signature) { try SignedRequest.verify(signed, secret: "kez") }
        let huge = SignedRequest.sign(
            payload: ["algorithm": "HMAC-SHA256", "pad": .string(String(repeating: "A", count: 9000))], secret: "key")
        #expect(throws: SignedRequest.Failure.malformed) { try SignedRequest.verify(huge, secret: "key") }
    }

    @Test("random tokens use only their alphabet, at the length asked")
    func randomTokens() {
        #expect(RandomToken.base64URL(bytes: 32).utf8.count == 43)
        let hex = RandomToken.hex(64)
        #expect(hex.count == 64 && hex.allSatisfy(\.isHexDigit) && hex == hex.lowercased())
        let symbols = RandomToken.string(count: 4096, alphabet: "ab")
        #expect(symbols.count == 4096 && Set(symbols) == ["a", "b"])
        #expect(RandomToken.alphanumeric(0).isEmpty && RandomToken.string(count: 5, alphabet: "").isEmpty)
    }

    @Test("uniform by rejection: with 62 symbols, bytes 248 and up are skipped, never folded onto the first symbols")
    func rejection() {
        // Every byte value once, in order, then again: 248 of each 256 are used.
        var next = 0
        let source: (Int) -> [UInt8] = { count in
            defer { next += count }
            return (next..<next + count).map { UInt8($0 % 256) }
        }
        let text = RandomToken.string(count: 248 * 4, alphabet: RandomToken.alphanumerics, source: source)
        var counts: [Character: Int] = [:]
        for character in text { counts[character, default: 0] += 1 }
        // 248 = 4 × 62: each symbol exactly 4 times per full pass; a modulo without rejection would
        // give the first 8 symbols a fifth each pass.
        #expect(counts.count == 62 && Set(counts.values) == [16])
    }
}
