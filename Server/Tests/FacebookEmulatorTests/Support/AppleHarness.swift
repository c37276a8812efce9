import Crypto
import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyShared
import Testing
import _CryptoExtras

@testable import FacebookEmulator

/// A developer team's side of Sign in with Apple: its Sign in with Apple key (whose public half
/// the emulator is registered with) and the client secrets a backend signs with it.
struct AppleTeam: Sendable {
    static let bundleID = AppleRegistration.demoClientIDs[0]
    static let servicesID = AppleRegistration.demoClientIDs[1]
    /// `Demo.start` as epoch seconds: what the emulator's clock reads in tests.
    static let now = Int(Demo.start.timeIntervalSince1970)

    let key = P256.Signing.PrivateKey()

    var registration: AppleRegistration {
        AppleRegistration(
            teamID: AppleRegistration.demoTeamID, keyID: AppleRegistration.demoKeyID, publicKey: key.publicKey,
            clientIDs: AppleRegistration.demoClientIDs)
    }

    /// A client secret as "Creating a client secret" describes it; each parameter spoils one part.
    func clientSecret(
        clientID: String = bundleID, issuedAt: Int = now, expiresAt: Int? = nil,
        issuer: String = AppleRegistration.demoTeamID,
        audience: String = "https://appleid.apple.com", subject: String? = nil,
        kid: String = AppleRegistration.demoKeyID,
        signingKey: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        let header: JSONValue = ["alg": "ES256", "kid": .string(kid)]
        let claims: JSONValue = [
            "iss": .string(issuer), "iat": .int(issuedAt), "exp": .int(expiresAt ?? issuedAt + 3600),
            "aud": .string(audience), "sub": .string(subject ?? clientID),
        ]
        let input = Base64URL.encode(header.encoded()) + "." + Base64URL.encode(claims.encoded())
        let signature = try (signingKey ?? key).signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Base64URL.encode(signature)
    }
}

/// Runs `body` against an emulator that also plays Apple for `team`.
func withAppleEmulator(
    team: AppleTeam = AppleTeam(), notificationURL: String? = nil,
    _ body: @escaping @Sendable (EmulatorClient, AppleTeam) async throws -> Void
) async throws {
    var registration = team.registration
    registration.notificationURL = notificationURL
    try await withEmulator({ $0.apple = registration }) { emulator in try await body(emulator, team) }
}

extension EmulatorClient {
    /// One Sign in with Apple authorization on the device, through the control API.
    func appleAuthorization(_ body: JSONValue) async throws -> JSONValue {
        let response = try await post("/_emulator/apple/authorizations", json: body)
        #expect(response.status == .ok)
        return try response.json()
    }

    /// Apple's JWKS as public keys by kid, built from `n` and `e` as a JOSE library would.
    func appleKeys() async throws -> [String: _RSA.Signing.PublicKey] {
        let body = try await get("/auth/keys").json()
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for key in try #require(body["keys"]?.arrayValue) {
            #expect(key["kty"] == "RSA" && key["alg"] == "RS256" && key["use"] == "sig")
            let n = try #require(key["n"]?.stringValue.flatMap(Base64URL.decode))
            let e = try #require(key["e"]?.stringValue.flatMap(Base64URL.decode))
            keys[try #require(key["kid"]?.stringValue)] = try _RSA.Signing.PublicKey(n: n, e: e)
        }
        return keys
    }

    /// Whether `token` verifies against Apple's published key named by its `kid`.
    func verifiesWithApple(_ token: JWTParts) async throws -> Bool {
        guard let kid = token.header["kid"]?.stringValue, let key = try await appleKeys()[kid] else { return false }
        return key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: token.signature),
            for: SHA256.hash(data: Data(token.signingInput.utf8)), padding: .insecurePKCS1v1_5)
    }

    /// `POST /auth/token` with form parameters.
    func appleToken(_ form: [(String, String)]) async throws -> TestResponse {
        try await post("/auth/token", form: form)
    }

    /// Exchanges a fresh authorization of `user` for tokens, with a valid client secret.
    func appleExchange(
        team: AppleTeam, user: String = "alice", clientID: String = AppleTeam.bundleID
    ) async throws
        -> JSONValue
    {
        let authorization = try await appleAuthorization(["user": .string(user), "client_id": .string(clientID)])
        let code = try #require(authorization["authorization_code"]?.stringValue)
        let response = try await appleToken([
            ("client_id", clientID), ("client_secret", try team.clientSecret(clientID: clientID)),
            ("grant_type", "authorization_code"), ("code", code),
        ])
        #expect(response.status == .ok)
        return try response.json()
    }
}
