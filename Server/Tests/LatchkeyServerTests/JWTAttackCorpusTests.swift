import FacebookEmulator
import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import ServerTestVectors
import Testing

@testable import LatchkeyServer

/// The JWT attack corpus (Tests/Vectors) against the server itself: Facebook's id tokens through
/// the running server, Latchkey's access tokens through the session verifier.
@Suite("JWT attack corpus")
struct JWTAttackCorpusTests {
    @Test("every id-token case gets its expected answer, and none after the first costs a network call")
    func idTokens() async throws {
        let pem = try #require(Vectors.document["rsa"]?["private_key_pem"]?.stringValue)
        try await Stack.run(
            emulatorSeed: { seed in
                seed.signingKeys = [pem]
                seed.apps.append(EmulatorApp(id: Vectors.appID, secret: "vector-app-secret", name: "Vectors"))
            },
            { $0.facebook.apps.append(.init(id: Vectors.appID, secret: "vector-app-secret")) }
        ) { (stack: Stack) async throws in
            #expect(stack.clock.now == Vectors.now)
            let cases = Vectors.cases("id_tokens")
            // The first valid case fetches Facebook's keys once; from then on the log must stay empty.
            let first = try #require(cases.first)
            #expect(try await Self.answer(first, stack) == "ok")
            try await stack.emulatorDelete("/_emulator/requests")
            for vector in cases.dropFirst() {
                let answer = try await Self.answer(vector, stack)
                // Over the size cap, the request reader refuses the field before any token code runs.
                let name = vector["name"]?.stringValue ?? ""
                let expected = name.hasPrefix("huge") ? "invalid_request" : vector["server"]?.stringValue
                #expect(answer == expected, "\(vector["name"] ?? ""): \(answer ?? "nil")")
            }
            let requests = try await stack.emulatorGET("/_emulator/requests")["requests"]?.arrayValue ?? []
            #expect(requests.isEmpty, "network calls during the corpus: \(requests)")
        }
    }

    /// "ok" for a sign-in, else the error code.
    static func answer(_ vector: JSONValue, _ stack: Stack) async throws -> String? {
        let response = try await stack.signIn([
            "idToken": vector["token"] ?? .null, "nonce": vector["nonce"] ?? .null,
        ])
        #expect(response.status.code < 500, "\(vector["name"] ?? "")")
        return response.status == .ok ? "ok" : response.errorCode
    }

    @Test("every access-token case gets its expected answer from the session verifier")
    func accessTokens() throws {
        let p256 = try #require(Vectors.document["p256"])
        let raw = try #require(p256["raw_private_key"]?.stringValue.flatMap(Base64URL.decode))
        let key = try SessionSigningKey(rawPrivateKey: raw, createdAt: Vectors.now, retiredAt: nil)
        #expect(key.kid == p256["kid"]?.stringValue)
        var configuration = ServerConfiguration()
        configuration.http.publicURL = p256["issuer"]?.stringValue
        let tokens = SessionTokens(
            keys: SessionKeys(try SessionKeyRing(keys: [key], now: Vectors.now, accessTokenLifetime: 900)),
            origin: ServerOrigin(configuration), accessTokenLifetime: 900, refreshTokenLifetime: 86_400)
        let cases = Vectors.cases("access_tokens")
        #expect(cases.count >= 18)
        for vector in cases {
            let outcome: String
            do {
                let claims = try tokens.verifyUncached(vector["token"]?.stringValue ?? "", now: Vectors.now)
                #expect(claims.userID == "user-1" && claims.sessionID == "session-1")
                outcome = "ok"
            } catch let error as APIError {
                outcome = error.code.rawValue
            }
            #expect(outcome == vector["expect"]?.stringValue, "\(vector["name"] ?? "")")
        }
    }
}
