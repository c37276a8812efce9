import AsyncHTTPClient
import Foundation
import LatchkeyAPI

/// Entry points for the micro benchmarks in `Benchmarks/`: the server's own code paths, without
/// HTTP or Facebook around them. `package`: the benchmarks are a target of this package, and
/// nothing outside it sees these.
package enum BenchmarkSupport {
    /// Limited Login id-token verification exactly as `POST /v1/auth/facebook` runs it, against a
    /// pinned JWKS instead of Facebook's.
    package struct IDTokens: Sendable {
        let verifier: LimitedLoginVerifier

        /// - Parameters:
        ///   - jwks: a JWKS document with the RSA keys that sign the tokens.
        ///   - appID: the audience to accept.
        ///   - now: the verifier's clock.
        package init(jwks: JSONValue, appID: String, now: Date) async throws {
            var configuration = ServerConfiguration()
            configuration.facebook.apps = [.init(id: appID, secret: "unused")]
            configuration.clock = { now }
            let keys = KeySetCache(
                client: .shared, url: "http://127.0.0.1:1/unused", timeout: 1, refetchInterval: 3600,
                clock: { now })
            try await keys.pin(jwks)
            verifier = LimitedLoginVerifier(keys: keys, configuration: configuration)
        }

        /// Verifies one token and returns its subject.
        package func verify(_ token: String, nonce: String) async throws -> String {
            try await verifier.verify(token, nonce: nonce).subject
        }
    }

    /// Session access tokens: ES256 signing and verification as the server does them.
    package struct SessionSigner: Sendable {
        let tokens: SessionTokens

        /// A signer with a fresh key.
        package init(now: Date) throws {
            var configuration = ServerConfiguration()
            configuration.http.publicURL = "https://auth.example.com"
            tokens = SessionTokens(
                keys: SessionKeys(try SessionKeyRing(keys: [.generate(now: now)], now: now, accessTokenLifetime: 900)),
                origin: ServerOrigin(configuration), accessTokenLifetime: 900, refreshTokenLifetime: 86_400)
        }

        /// A signed access token.
        package func sign(userID: String, sessionID: String, now: Date) throws -> String {
            try tokens.accessToken(
                userID: userID, sessionID: sessionID, assurance: SessionAssurance(method: .classic), now: now)
        }

        /// Verifies a token and returns its user id.
        package func verify(_ token: String, now: Date) throws -> String {
            try tokens.verify(token, now: now).userID
        }

        /// The signature and claims check itself, as for a token not seen before.
        package func verifyUncached(_ token: String, now: Date) throws -> String {
            try tokens.verifyUncached(token, now: now).userID
        }
    }

    /// A Graph `/me` answer flattened and mapped onto properties with `mapping`, as a login does.
    package static func mapProfile(_ me: [String: JSONValue], mapping: [String: String]) -> [String: JSONValue] {
        FieldMapping(trusted: mapping).apply(to: FieldMapping.normalizeGraph(me))
    }
}
