import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import TestVectors
import Testing
import _CryptoExtras

/// The id-token vectors and the JWT attack corpus, under the server's policy and the device's:
/// every case's expected code is fixed in the vector file, so the server (LimitedLoginVerifier),
/// the SDK (IDTokenValidator) and this module are held to the same answers.
@Suite("Limited Login checks against the shared vectors and the attack corpus")
struct IDTokenVectorTests {
    static let keys = RSAJWK.signingKeys(in: ["keys": [Vectors.document["rsa"]?["jwk"] ?? .null]])

    /// The server's default policy (`LATCHKEY_LIMITED_LOGIN_NONCE=hashed`).
    static let serverPolicy = IDTokenPolicy(
        issuer: .oneOf([Vectors.issuer]), audiences: [Vectors.appID], clockSkew: 60, maximumAge: 600,
        nonceMatching: .hashed)

    /// Runs every check in order; "ok" or the failure's code.
    static func outcome(_ vector: JSONValue, policy: IDTokenPolicy) -> String {
        do {
            let token = try LimitedLoginToken(vector["token"]?.stringValue ?? "")
            try token.verifySignature(with: keys[token.kid])
            _ = try token.claims(policy: policy, nonce: vector["nonce"]?.stringValue, now: Vectors.now)
            return "ok"
        } catch {
            return error.code.rawValue
        }
    }

    @Test("the vector key set parses to exactly its one key")
    func keySet() {
        #expect(Self.keys.count == 1)
        #expect(Self.keys.keys.first == Vectors.document["rsa"]?["jwk"]?["kid"]?.stringValue)
    }

    @Test("server policy", arguments: Vectors.cases("id_tokens"))
    func server(vector: JSONValue) {
        #expect(
            Self.outcome(vector, policy: Self.serverPolicy) == vector["server"]?.stringValue,
            "\(vector["name"] ?? "")")
    }

    @Test("device policy", arguments: Vectors.cases("id_tokens"))
    func device(vector: JSONValue) {
        #expect(
            Self.outcome(vector, policy: .device(appID: Vectors.appID)) == vector["device"]?.stringValue,
            "\(vector["name"] ?? "")")
    }

    @Test("every header attack is refused before a key is looked up")
    func headerAttacksNeedNoKey() {
        // Attacks on the header fail in `LimitedLoginToken.init`, which has no key to fetch: the
        // server looks a kid up (and may fetch Facebook's keys) only for a header that passed.
        let headerAttacks = Vectors.cases("id_tokens").filter { vector in
            let name = vector["name"]?.stringValue ?? ""
            return [
                "alg ", "HS256", "kid path", "kid SQL", "kid missing", "jku", "x5u", "jwk", "x5c", "crit", "typ",
                "duplicate alg", "nested", "huge", "four segments", "claims are an array", "standard base64",
            ]
            .contains { name.hasPrefix($0) }
        }
        #expect(headerAttacks.count == 19)
        for vector in headerAttacks {
            #expect(throws: IDTokenFailure.self, "\(vector["name"] ?? "")") {
                _ = try LimitedLoginToken(vector["token"]?.stringValue ?? "")
            }
        }
    }

    @Test("JWKS entries that are not RS256 signing keys, or share a kid, are skipped")
    func keySetEntries() throws {
        let jwk = try #require(Vectors.document["rsa"]?["jwk"])
        func with(_ changes: [String: JSONValue]) -> JSONValue {
            guard case .object(var members) = jwk else { return jwk }
            for (name, value) in changes { members[name] = value }
            return .object(members)
        }
        #expect(RSAJWK.signingKeys(in: ["keys": [with(["use": "enc"])]]).isEmpty)
        #expect(RSAJWK.signingKeys(in: ["keys": [with(["alg": "RS512"])]]).isEmpty)
        #expect(RSAJWK.signingKeys(in: ["keys": [with(["kid": "../x"])]]).isEmpty)
        #expect(RSAJWK.signingKeys(in: ["keys": [with(["n": "AQAB"])]]).isEmpty)
        #expect(RSAJWK.signingKeys(in: ["keys": [jwk, jwk]]).isEmpty)
        #expect(RSAJWK.signingKeys(in: ["keys": [jwk, with(["kid": "other"])]]).count == 2)
        let key = try #require(Self.keys.values.first)
        #expect(Base64URL.encode(key.modulus) == jwk["n"]?.stringValue)
        #expect(Base64URL.encode(key.exponent) == jwk["e"]?.stringValue)
    }
}
