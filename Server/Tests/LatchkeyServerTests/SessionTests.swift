import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import NIOCore
import Testing

@Suite("Sessions: access tokens, refresh rotation, sign-out")
struct SessionTests {
    static func signedIn(_ stack: Stack, user: String = "alice") async throws -> JSONValue {
        let body = try await stack.signIn(["accessToken": .string(try await stack.facebookToken(user))]).json()
        return try #require(body["session"])
    }

    static func refresh(_ stack: Stack, _ token: String, form: Bool = true) async throws -> TestResponse {
        if form {
            return try await stack.server.execute(
                uri: "/v1/oauth/token", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "grant_type=refresh_token&refresh_token=\(token)"))
        }
        return try await stack.post(
            "/v1/oauth/token", json: ["grant_type": "refresh_token", "refresh_token": .string(token)])
    }

    @Test("the access token is an ES256 JWT that verifies with the published JWKS alone")
    func jwksVerification() async throws {
        try await Stack.run { stack in
            let session = try await Self.signedIn(stack)
            let token = try #require(session["access_token"]?.stringValue)
            let claims = try await stack.verifiedClaims(token)
            #expect(claims["iss"] == "http://latchkey.test" && claims["aud"] == "latchkey")
            #expect(claims["exp"] == .int(1_800_000_000 + 900))
            let discovery = try await stack.get("/.well-known/openid-configuration").json()
            #expect(discovery["jwks_uri"] == "http://latchkey.test/.well-known/jwks.json")
        }
    }

    @Test("GET /v1/users/me needs a valid, unexpired access token")
    func me() async throws {
        try await Stack.run { stack in
            let session = try await Self.signedIn(stack)
            let token = try #require(session["access_token"]?.stringValue)
            let me = try await stack.get("/v1/users/me", bearer: token)
            #expect(try me.json()["properties"]?["name"] == "Alice Liddell")
            #expect(try await stack.get("/v1/users/me").errorCode == "unauthorized")
            #expect(try await stack.get("/v1/users/me", bearer: token + "x").errorCode == "unauthorized")
            stack.clock.advance(901)
            let expired = try await stack.get("/v1/users/me", bearer: token)
            #expect(expired.status == .unauthorized && expired.errorCode == "unauthorized")
        }
    }

    @Test("refresh rotates; presenting a spent token revokes the whole session")
    func rotationAndReuse() async throws {
        try await Stack.run { stack in
            let session = try await Self.signedIn(stack)
            let first = try #require(session["refresh_token"]?.stringValue)
            let rotated = try await Self.refresh(stack, first)
            #expect(rotated.status == .ok)
            let second = try #require(try rotated.json()["refresh_token"]?.stringValue)
            #expect(second != first)
            let access = try #require(try rotated.json()["access_token"]?.stringValue)
            #expect(try await stack.get("/v1/users/me", bearer: access).status == .ok)

            // The owner used the new token; past the retry window, the spent one again is a reuse.
            let third = try #require(try await Self.refresh(stack, second).json()["refresh_token"]?.stringValue)
            stack.clock.advance(stack.configuration.sessions.refreshRetryWindow + 0.001)
            let reused = try await Self.refresh(stack, first, form: false)
            #expect(reused.status == .badRequest && reused.errorCode == "refresh_token_reused")
            // The thief's and the owner's tokens are both dead now.
            #expect(try await Self.refresh(stack, third).errorCode == "refresh_token_invalid")
            #expect(try await stack.get("/v1/users/me", bearer: access).errorCode == "session_revoked")
        }
    }

    @Test(
        "a refresh whose answer was lost or never saved is retried with the same new refresh token, however late; once that token is used, the old one is refused moments later and a reuse after the window"
    )
    func retryWithinWindow() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let first = try #require(try await Self.signedIn(stack)["refresh_token"]?.stringValue)
            let answer = try await Self.refresh(stack, first).json()
            let second = try #require(answer["refresh_token"]?.stringValue)
            // Moments later (a lost answer), and days later (the app was killed before saving it).
            for wait: TimeInterval in [stack.configuration.sessions.refreshRetryWindow - 1, 3 * 86_400] {
                stack.clock.advance(wait)
                let retried = try await Self.refresh(stack, first)
                #expect(retried.status == .ok)
                #expect(try retried.json()["refresh_token"]?.stringValue == second)
                let access = try #require(try retried.json()["access_token"]?.stringValue)
                #expect(try await stack.get("/v1/users/me", bearer: access).status == .ok)
            }

            // The app got its answer this time and moved on, twice. The second token again,
            // moments after its successor was used: a concurrent refresh that lost the race,
            // refused with the session untouched.
            let third = try #require(try await Self.refresh(stack, second).json()["refresh_token"]?.stringValue)
            let rotated = try await Self.refresh(stack, third).json()
            let fourth = try #require(rotated["refresh_token"]?.stringValue)
            let access = try #require(rotated["access_token"]?.stringValue)
            let superseded = try await Self.refresh(stack, second)
            #expect(superseded.status == .badRequest && superseded.errorCode == "refresh_token_superseded")
            #expect(try superseded.json()["error"]?.stringValue == "invalid_grant")
            #expect(try await stack.get("/v1/users/me", bearer: access).status == .ok)
            // The first token's rotation is days old and its successor used: a reuse.
            #expect(try await Self.refresh(stack, first).errorCode == "refresh_token_reused")
            #expect(try await Self.refresh(stack, fourth).errorCode == "refresh_token_invalid")
        }
    }

    @Test("concurrent refreshes of one token (an app racing itself) all get the same successor; the session lives")
    func concurrentRetries() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let first = try #require(try await Self.signedIn(stack)["refresh_token"]?.stringValue)
            let answers = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<6 {
                    group.addTask { try await Self.refresh(stack, first).json()["refresh_token"]?.stringValue }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(answers.count == 6 && Set(answers).count == 1 && answers[0] != nil)
            let next = try #require(answers[0])
            #expect(try await Self.refresh(stack, next).status == .ok)
        }
    }

    @Test("with the retry window off, a spent token at once revokes the session, its successor unused or not")
    func retryWindowOff() async throws {
        try await Stack.run({ $0.sessions.refreshRetryWindow = 0 }) { (stack: Stack) async throws in
            let first = try #require(try await Self.signedIn(stack)["refresh_token"]?.stringValue)
            let second = try #require(try await Self.refresh(stack, first).json()["refresh_token"]?.stringValue)
            #expect(try await Self.refresh(stack, first).errorCode == "refresh_token_reused")
            #expect(try await Self.refresh(stack, second).errorCode == "refresh_token_invalid")

            let again = try #require(try await Self.signedIn(stack)["refresh_token"]?.stringValue)
            let next = try #require(try await Self.refresh(stack, again).json()["refresh_token"]?.stringValue)
            #expect(try await Self.refresh(stack, next).status == .ok)
            #expect(try await Self.refresh(stack, again).errorCode == "refresh_token_reused")
        }
    }

    @Test("expired and unknown refresh tokens, and bad grants, are refused")
    func refreshErrors() async throws {
        try await Stack.run({ $0.sessions.refreshTokenLifetime = 3600 }) { stack in
            let session = try await Self.signedIn(stack)
            let token = try #require(session["refresh_token"]?.stringValue)
            #expect(try await Self.refresh(stack, "nope").errorCode == "refresh_token_invalid")
            let badGrant = try await stack.post("/v1/oauth/token", json: ["grant_type": "password"])
            #expect(badGrant.errorCode == "unsupported_grant_type")
            #expect(try badGrant.json()["error"]?.stringValue == "unsupported_grant_type")
            stack.clock.advance(3601)
            #expect(try await Self.refresh(stack, token).errorCode == "refresh_token_invalid")
        }
    }

    @Test("logout ends this session; logout-all ends every session of the user")
    func logout() async throws {
        try await Stack.run { stack in
            let one = try #require(try await Self.signedIn(stack)["access_token"]?.stringValue)
            let two = try #require(try await Self.signedIn(stack)["access_token"]?.stringValue)
            let three = try #require(try await Self.signedIn(stack)["access_token"]?.stringValue)
            let out = try await stack.post("/v1/auth/logout", json: [:], headers: [.authorization: "Bearer \(one)"])
            #expect(out.status == .noContent)
            #expect(try await stack.get("/v1/users/me", bearer: one).errorCode == "session_revoked")
            #expect(try await stack.get("/v1/users/me", bearer: two).status == .ok)
            let all = try await stack.post("/v1/auth/logout-all", json: [:], headers: [.authorization: "Bearer \(two)"])
            #expect(try all.json()["revokedSessions"] == 2)
            #expect(try await stack.get("/v1/users/me", bearer: three).errorCode == "session_revoked")
        }
    }

    @Test("disabling a user ends their sessions and refuses sign-in")
    func disabledUser() async throws {
        try await Stack.run { stack in
            let body = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).json()
            let userID = try #require(body["user"]?["id"]?.stringValue)
            let access = try #require(body["session"]?["access_token"]?.stringValue)
            let refresh = try #require(body["session"]?["refresh_token"]?.stringValue)
            try await stack.store.setUserDisabled(id: userID, disabled: true, now: stack.clock.now, by: .commandLine)
            #expect(try await stack.get("/v1/users/me", bearer: access).errorCode == "session_revoked")
            #expect(try await Self.refresh(stack, refresh).errorCode == "refresh_token_invalid")
            let again = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            #expect(again.status == .forbidden && again.errorCode == "user_disabled")
        }
    }

    @Test("PATCH /v1/users/me changes only writable properties")
    func patchMe() async throws {
        try await Stack.run({ $0.users.writableProperties = ["nickname"] }) { stack in
            let token = try #require(try await Self.signedIn(stack)["access_token"]?.stringValue)
            let allowed = try await stack.server.execute(
                uri: "/v1/users/me", method: .patch,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"properties":{"nickname":"Al"}}"#))
            #expect(try allowed.json()["properties"]?["nickname"] == "Al")
            let refused = try await stack.server.execute(
                uri: "/v1/users/me", method: .patch,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"properties":{"email":"evil@example.com"}}"#))
            #expect(refused.errorCode == "property_not_writable")
        }
    }

    @Test("concurrent first logins of one person create exactly one user")
    func concurrentFirstLogins() async throws {
        try await Stack.run { stack in
            var tokens: [String] = []
            for _ in 0..<8 { tokens.append(try await stack.facebookToken("bob")) }
            let results = try await withThrowingTaskGroup(of: JSONValue.self) { group in
                for token in tokens {
                    group.addTask { try await stack.signIn(["accessToken": .string(token)]).json() }
                }
                return try await group.reduce(into: [JSONValue]()) { $0.append($1) }
            }
            #expect(Set(results.compactMap { $0["user"]?["id"]?.stringValue }).count == 1)
            #expect(results.filter { $0["isNewUser"] == true }.count == 1)
        }
    }
}

@Suite("Signing-key rotation and key caching")
struct KeyRotationTests {
    @Test(
        "after `keys rotate`, a restarted server publishes the new key at once, signs with it after the activation delay, and old tokens still verify"
    )
    func rotateAndRestart() async throws {
        try await Stack.run { stack in
            let old = try #require(try await SessionTests.signedIn(stack)["access_token"]?.stringValue)
            let oldKid = try Self.kid(old)
            stack.clock.advance(1)
            let newKid = try await rotateSigningKey(
                in: stack.store, protection: SigningKeyProtection(stack.configuration), now: stack.clock.now)
            for (wait, signer) in [(0, oldKid), (stack.configuration.sessions.keyActivationDelay, newKid)] {
                stack.clock.advance(wait)
                let restarted = try await buildApplication(
                    configuration: stack.configuration, store: stack.store,
                    logger: stack.logs.logger(label: "latchkey"))
                try await restarted.test(.live) { client in
                    let again = Stack(
                        server: client, emulatorURL: stack.emulatorURL, clock: stack.clock, store: stack.store)
                    #expect(try await again.get("/v1/users/me", bearer: old).status == .ok)
                    let jwks = try await again.get("/.well-known/jwks.json").json()
                    #expect(
                        Set(jwks["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue } ?? []) == [oldKid, newKid])
                    let fresh = try #require(try await SessionTests.signedIn(again)["access_token"]?.stringValue)
                    #expect(try Self.kid(fresh) == signer)
                }
            }
        }
    }

    /// The `kid` in an access token's header.
    static func kid(_ token: String) throws -> String? {
        try JSONValue.decode(try #require(Base64URL.decode(token.split(separator: ".")[0])))["kid"]?.stringValue
    }

    @Test("when Facebook's JWKS fails, cached keys keep serving")
    func staleKeysServe() async throws {
        try await Stack.run { stack in
            #expect(
                try await stack.signIn(["idToken": .string(try await stack.idToken()), "nonce": "raw-nonce-123"]).status
                    == .ok)
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "/.well-known/oauth/openid/jwks", "preset": "server_error"])
            stack.clock.advance(3 * 3600)
            let token = try await stack.idToken()
            #expect(try await stack.signIn(["idToken": .string(token), "nonce": "raw-nonce-123"]).status == .ok)
        }
    }

    @Test("mapped properties refresh on later logins unless configured not to")
    func propertyRefresh() async throws {
        for refresh in [true, false] {
            try await Stack.run({ $0.users.refreshPropertiesOnLogin = refresh }) { stack in
                let first = try await stack.signIn([
                    "accessToken": .string(try await stack.facebookToken(scopes: ["public_profile"])),
                    "fieldsMapping": ["email": "email", "name": "name"],
                ]).json()
                #expect(first["user"]?["properties"] == ["name": "Alice Liddell"])
                let second = try await stack.signIn([
                    "accessToken": .string(try await stack.facebookToken(scopes: ["email"])),
                    "fieldsMapping": ["email": "email", "name": "name"],
                ]).json()
                #expect((second["user"]?["properties"]?["email"] == "alice@example.com") == refresh)
            }
        }
    }
}
