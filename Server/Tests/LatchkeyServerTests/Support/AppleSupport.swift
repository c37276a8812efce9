import Crypto
import FacebookEmulator
import Foundation
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyShared
import Logging
import Testing

@testable import LatchkeyServer

/// Sign in with Apple in the test stack: the team key the emulator checks client secrets with
/// and the server signs them with, and calls that stand in for the device.
enum AppleDemo {
    /// The team's Sign in with Apple key (the `.p8`), one per test process.
    static let key = P256.Signing.PrivateKey()
    /// The app's bundle id, and its web Services id.
    static let clientID = AppleRegistration.demoClientIDs[0]
    static let webClientID = AppleRegistration.demoClientIDs[1]
    /// The raw nonce tests send; Apple's token carries its SHA-256 hex.
    static let rawNonce = "apple-raw-nonce-42"

    /// The emulator's registration of the team.
    static var registration: AppleRegistration {
        AppleRegistration(
            teamID: AppleRegistration.demoTeamID, keyID: AppleRegistration.demoKeyID, publicKey: key.publicKey,
            clientIDs: AppleRegistration.demoClientIDs)
    }

    /// The server's Apple settings, pointed at the emulator at `emulator`.
    static func configure(_ configuration: inout ServerConfiguration, emulator: String) {
        configuration.apple.clientIDs = AppleRegistration.demoClientIDs
        configuration.apple.teamID = AppleRegistration.demoTeamID
        configuration.apple.keyID = AppleRegistration.demoKeyID
        configuration.apple.privateKey = .init(key)
        configuration.apple.url = emulator
        configuration.apple.timeout = 30
        // Tests count and fault Apple's calls; they run the credential check themselves.
        configuration.apple.checksCredentials = false
    }
}

/// What the device gets from Sign in with Apple (`ASAuthorizationAppleIDCredential`), as the
/// emulator's control API mints it.
struct AppleCredential {
    var idToken: String
    var code: String
    var subject: String
    var givenName: String?
    var familyName: String?
    var claims: JSONValue

    /// `POST /v1/auth/apple`'s body for it, with `nonce` (the raw one by default) and the name
    /// when the credential carried one.
    func body(nonce: String = AppleDemo.rawNonce, name: Bool = true) -> JSONValue {
        AppleExchangeRequest(
            idToken: idToken, authorizationCode: code, nonce: nonce, givenName: name ? givenName : nil,
            familyName: name ? familyName : nil
        ).json
    }
}

extension Stack {
    /// Authorizes `user` with Sign in with Apple in the emulator, as the device would.
    func appleCredential(
        _ user: String = "alice", client: String = AppleDemo.clientID, nonce: String? = AppleDemo.rawNonce,
        options: [String: JSONValue] = [:]
    ) async throws -> AppleCredential {
        var body: [String: JSONValue] = ["user": .string(user), "client_id": .string(client)]
        if let nonce { body["nonce"] = .string(Demo.nonceClaim(nonce)) }
        body.merge(options) { _, given in given }
        let answer = try await emulator("/_emulator/apple/authorizations", .object(body))
        return AppleCredential(
            idToken: try #require(answer["identity_token"]?.stringValue, "\(answer)"),
            code: try #require(answer["authorization_code"]?.stringValue),
            subject: try #require(answer["user"]?.stringValue),
            givenName: answer["full_name"]?["given_name"]?.stringValue,
            familyName: answer["full_name"]?["family_name"]?.stringValue, claims: answer["claims"] ?? [:])
    }

    /// `POST /v1/auth/apple`.
    func signInWithApple(_ body: JSONValue, bearer: String? = nil) async throws -> TestResponse {
        try await send(.post, "/v1/auth/apple", bearer: bearer, json: body)
    }

    /// The refresh tokens Apple (the emulator) issued, with whether each was revoked.
    func appleTokens() async throws -> [JSONValue] {
        try await emulatorGET("/_emulator/apple/tokens")["tokens"]?.arrayValue ?? []
    }

    /// A job runner over the stack's store, calling the emulator, on the stack's clock.
    func jobs() -> JobService {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return JobService(
            store: store, configuration: configuration,
            revoker: FacebookPermissionRevoker(configuration: configuration, client: .shared, logger: logger),
            appleRevoker: AppleTokenRevoker(
                configuration: configuration, store: store, client: .shared, logger: logger),
            logger: logger)
    }
}
