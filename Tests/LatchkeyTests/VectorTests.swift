import Foundation
import LatchkeyAPI
import LatchkeyCore
import TestVectors
import Testing

/// The SDK against the shared vectors (Tests/Vectors): its id-token validator gives each case the
/// device answer the vector file fixes, and its nonce hashing is Python's.
@Suite("SDK against the shared crypto vectors")
struct SDKVectorTests {
    static let validator: IDTokenValidator? = {
        let jwks = JSONValue.object(["keys": [Vectors.document["rsa"]?["jwk"] ?? .null]]).encoded()
        return try? IDTokenValidator(appID: Vectors.appID, jwks: jwks)
    }()

    @Test("each id-token case gets the device answer", arguments: Vectors.cases("id_tokens"))
    func idToken(vector: JSONValue) throws {
        let validator = try #require(Self.validator)
        let outcome: String
        do {
            let profile = try validator.validate(
                vector["token"]?.stringValue ?? "", nonce: vector["nonce"]?.stringValue ?? "", now: Vectors.now)
            #expect(profile.name == "Vector Person")
            outcome = "ok"
        } catch {
            outcome = error.code.rawValue
        }
        #expect(outcome == vector["device"]?.stringValue, "\(vector["name"] ?? "")")
    }

    @Test("Nonce.sha256 is Python's", arguments: Vectors.cases("nonces"))
    func nonce(vector: JSONValue) {
        #expect(Nonce(raw: vector["raw"]?.stringValue ?? "").sha256 == vector["sha256"]?.stringValue)
    }
}
