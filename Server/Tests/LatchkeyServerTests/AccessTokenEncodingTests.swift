import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import Testing

@testable import LatchkeyServer

/// Each access token has exactly one valid encoding: low-S signatures only, no padding.
@Suite("Access token encoding")
struct AccessTokenEncodingTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    /// ⌊n/2⌋ for P-256 in lowercase hex, computed outside the code under test: as fixed-width hex,
    /// string order is numeric order.
    static let halfOrderHex = "7fffffff800000007fffffffffffffffde737d56d38bcf4279dce5617e3192a8"

    static func tokens() throws -> SessionTokens {
        var configuration = ServerConfiguration()
        configuration.http.publicURL = "https://auth.example.com"
        return SessionTokens(
            keys: SessionKeys(try SessionKeyRing(keys: [.generate(now: now)], now: now, accessTokenLifetime: 900)),
            origin: ServerOrigin(configuration), accessTokenLifetime: 900, refreshTokenLifetime: 86_400)
    }

    /// The token's signature bytes, and the token with S replaced by n − S (the other valid S).
    static func flipped(_ token: String) throws -> (signature: Data, token: String) {
        let parts = token.split(separator: ".").map(String.init)
        let signature = try #require(Base64URL.decode(parts[2]))
        let flipped = Data(signature.prefix(32) + P256LowS.subtract(Array(signature.suffix(32)), from: P256LowS.order))
        return (signature, parts[0] + "." + parts[1] + "." + Base64URL.encode(flipped))
    }

    @Test("the constants: n/2 is n shifted right; n − s undoes itself")
    func arithmetic() {
        #expect(Hex.encode(P256LowS.halfOrder) == Self.halfOrderHex)
        let s = Array(SHA256.hash(data: Data("any".utf8)))
        #expect(P256LowS.subtract(P256LowS.subtract(s, from: P256LowS.order), from: P256LowS.order) == s)
        let one = [UInt8](repeating: 0, count: 31) + [1]
        #expect(Hex.encode(P256LowS.subtract(one, from: P256LowS.order)).hasSuffix("fc632550"))
        #expect(!P256LowS.isGreater(P256LowS.halfOrder, than: P256LowS.halfOrder))
        #expect(P256LowS.isGreater(P256LowS.order, than: P256LowS.halfOrder))
    }

    @Test("every signature the server makes has S at most n/2")
    func lowSOnly() throws {
        let tokens = try Self.tokens()
        // swift-crypto's signer gives high S about half the time: 200 tokens all low is no accident.
        for index in 0..<200 {
            let token = try tokens.accessToken(
                userID: "u\(index)", sessionID: "s", assurance: .unrecorded, now: Self.now)
            let signature = try Self.flipped(token).signature
            #expect(signature.count == 64)
            #expect(Hex.encode(signature.suffix(32)) <= Self.halfOrderHex)
            #expect(try tokens.verifyUncached(token, now: Self.now).userID == "u\(index)")
        }
    }

    @Test("a high-S copy verifies mathematically but is refused, as is a padded copy")
    func highSRefused() throws {
        let tokens = try Self.tokens()
        let token = try tokens.accessToken(userID: "u", sessionID: "s", assurance: .unrecorded, now: Self.now)
        #expect(try tokens.verify(token, now: Self.now).userID == "u")  // now in the verified-token cache
        let (signature, copy) = try Self.flipped(token)
        let parts = copy.split(separator: ".").map(String.init)
        let highS = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        let key = tokens.keys.current.signing.privateKey.publicKey
        // The test means something: the raw check accepts both S values.
        #expect(key.isValidSignature(highS, for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(Base64URL.decode(parts[2]) != signature)
        #expect(throws: APIError.self) { try tokens.verify(copy, now: Self.now) }
        #expect(throws: APIError.self) { try tokens.verify(token + "==", now: Self.now) }
        #expect(throws: APIError.self) { try tokens.verifyUncached(token + "==", now: Self.now) }
    }

    @Test("through the server: the high-S copy of a working token is 401 unauthorized")
    func highSThroughServer() async throws {
        try await Stack.run { stack in
            let session = try await SessionTests.signedIn(stack)
            let token = try #require(session["access_token"]?.stringValue)
            #expect(try await stack.get("/v1/users/me", bearer: token).status == .ok)
            let copy = try Self.flipped(token).token
            let refused = try await stack.get("/v1/users/me", bearer: copy)
            #expect(refused.status == .unauthorized && refused.errorCode == "unauthorized")
            let padded = try await stack.get("/v1/users/me", bearer: token + "==")
            #expect(padded.status == .unauthorized && padded.errorCode == "unauthorized")
            #expect(try await stack.get("/v1/users/me", bearer: token).status == .ok)
        }
    }
}
