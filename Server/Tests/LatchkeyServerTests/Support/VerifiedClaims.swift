import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared
import Testing

extension Stack {
    /// An access token's claims, after checking that it is ES256 and that its signature verifies
    /// with the server's published JWKS alone, as an app's backend verifying offline would.
    func verifiedClaims(_ token: String) async throws -> JSONValue {
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let header = try JSONValue.decode(try #require(Base64URL.decode(parts[0])))
        #expect(header["alg"] == "ES256")
        let jwks = try await get("/.well-known/jwks.json").json()
        let jwk = try #require(jwks["keys"]?.arrayValue?.first { $0["kid"] == header["kid"] })
        let x = try #require(jwk["x"]?.stringValue.flatMap(Base64URL.decode))
        let y = try #require(jwk["y"]?.stringValue.flatMap(Base64URL.decode))
        let key = try P256.Signing.PublicKey(x963Representation: Data([0x04]) + x + y)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        return try JSONValue.decode(try #require(Base64URL.decode(parts[1])))
    }
}
