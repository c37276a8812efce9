import Crypto
import FacebookEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyShared
import Testing

@testable import LatchkeyServer

/// Apple identities among the others: linking both ways, a conflict and its merge, a guest's
/// upgrade, unlinking and deleting revoking Apple's tokens in the background, and Apple's
/// server-to-server notifications.
@Suite("Sign in with Apple: identities, revocation, notifications")
struct AppleIdentityTests {
    static func signIn(_ stack: Stack, _ user: String = "alice") async throws -> JSONValue {
        let response = try await stack.signInWithApple(try await stack.appleCredential(user).body())
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try response.json()
    }

    static func link(_ stack: Stack, _ user: String, bearer: String) async throws -> TestResponse {
        var body = try await stack.appleCredential(user).body().objectValue ?? [:]
        body["provider"] = "apple"
        return try await stack.send(.post, "/v1/users/me/identities", bearer: bearer, json: .object(body))
    }

    @Test("Apple linked to a Facebook user and Facebook to an Apple user; a conflict merges")
    func linkBothWays() async throws {
        try await Stack.run(apple: true, IdentityTests.configure) { stack in
            // Facebook first, Apple linked.
            let alice = try await IdentityTests.signIn(stack, "alice")
            let linked = try await Self.link(stack, "alice", bearer: try IdentityTests.bearer(alice))
            #expect(linked.status == .ok, "\(String(buffer: linked.body))")
            let providers = try linked.json()["user"]?["identities"]?.arrayValue?.compactMap {
                $0["provider"]?.stringValue
            }
            #expect(providers?.sorted() == ["apple", "facebook"])
            // Signing in with Apple now finds the same user.
            let viaApple = try await Self.signIn(stack, "alice")
            #expect(viaApple["user"]?["id"] == alice["user"]?["id"] && viaApple["isNewUser"] == false)
            // Apple first, Facebook linked.
            let bob = try await Self.signIn(stack, "bob")
            let facebook = try await stack.facebookToken("bob")
            let added = try await stack.send(
                .post, "/v1/users/me/identities", bearer: try IdentityTests.bearer(bob),
                json: ["provider": "facebook", "accessToken": .string(facebook)])
            #expect(added.status == .ok)
            #expect(try added.json()["user"]?["identities"]?.arrayValue?.count == 2)
            // Carol (Facebook) tries to link Bob's Apple: a conflict with a ticket.
            let carol = try await IdentityTests.signIn(stack, "carol")
            let conflict = try await Self.link(stack, "bob", bearer: try IdentityTests.bearer(carol))
            #expect(conflict.status == .conflict && conflict.errorCode == "identity_already_linked")
            let ticket = try #require(try conflict.json()["error"]?["linkTicket"]?.stringValue)
            // Bob signs in with Apple again (Apple's code was spent by the link) and completes.
            let owner = try await Self.signIn(stack, "bob")
            let merged = try await stack.send(
                .post, "/v1/users/me/identities/complete", bearer: try IdentityTests.bearer(owner),
                json: ["linkTicket": .string(ticket)])
            #expect(merged.status == .ok, "\(String(buffer: merged.body))")
            #expect(try merged.json()["mergedUserId"] == carol["user"]?["id"])
            #expect(try merged.json()["user"]?["identities"]?.arrayValue?.count == 3)
            // Unknown providers are refused.
            let unknown = try await stack.send(
                .post, "/v1/users/me/identities", bearer: try IdentityTests.bearer(owner),
                json: ["provider": "myspace", "idToken": "x"])
            #expect(unknown.status == .badRequest && unknown.errorCode == "invalid_request")
        }
    }

    @Test("a guest upgrades with Apple and keeps its id")
    func guestUpgrade() async throws {
        try await Stack.run(apple: true, IdentityTests.configure) { stack in
            let guest = try await stack.post("/v1/auth/anonymous", json: [:]).json()
            let upgraded = try await stack.signInWithApple(
                try await stack.appleCredential().body(), bearer: try IdentityTests.bearer(guest))
            #expect(upgraded.status == .ok)
            let body = try upgraded.json()
            #expect(body["user"]?["id"] == guest["user"]?["id"] && body["user"]?["isAnonymous"] == false)
            #expect(body["user"]?["properties"]?["givenName"] == "Alice")
        }
    }

    @Test("unlinking Apple and deleting the account revoke Apple's tokens in the background, retried")
    func revocation() async throws {
        try await Stack.run(apple: true, IdentityTests.configure) { stack in
            // Alice: Facebook and Apple, then Apple unlinked.
            let alice = try await IdentityTests.signIn(stack, "alice")
            let token = try IdentityTests.bearer(alice)
            #expect(try await Self.link(stack, "alice", bearer: token).status == .ok)
            let subject = try #require(try await stack.appleTokens().first?["user"]?.stringValue)
            let unlinked = try await stack.send(.delete, "/v1/users/me/identities/apple/\(subject)", bearer: token)
            #expect(unlinked.status == .ok)
            #expect(try await stack.appleTokens().allSatisfy { $0["revoked"] == false }, "in the background")
            #expect(await stack.jobs().runOnce() == 1)
            #expect(try await stack.appleTokens().allSatisfy { $0["revoked"] == true })
            let aliceID = try #require(alice["user"]?["id"]?.stringValue)
            #expect(
                try await stack.store.auditEvents(userID: aliceID, limit: 1).first?.event.type == .appleTokenRevoked)
            // Bob: Apple only, deletes his account; Apple fails once, the job waits and retries.
            let bob = try await Self.signIn(stack, "bob")
            let bobID = try #require(bob["user"]?["id"]?.stringValue)
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "/auth/revoke", "code": 1, "status": 500, "count": 1])
            let deleted = try await stack.send(.delete, "/v1/users/me", bearer: try IdentityTests.bearer(bob))
            #expect(deleted.status == .noContent)
            let jobs = stack.jobs()
            #expect(await jobs.runOnce() == 1)
            #expect(try await stack.appleTokens().contains { $0["user"] != .string(subject) && $0["revoked"] == false })
            #expect(await jobs.runOnce() == 0, "waiting for its retry")
            stack.clock.advance(JobService.retryDelay(afterAttempts: 1))
            #expect(await jobs.runOnce() == 1)
            #expect(try await stack.appleTokens().allSatisfy { $0["revoked"] == true })
            let events = try await stack.store.auditEvents(userID: bobID, limit: 5).map(\.event.type)
            #expect(events == [.appleTokenRevoked, .userDeleted])
            // Apple shows the sheet again: the next authorization shares the name.
            #expect(try await stack.appleCredential("bob").givenName != nil)
            // A token Apple already revoked (the person did it in Settings): revoking is done all the same.
            let carol = try await Self.signIn(stack, "carol")
            _ = try await stack.emulator("/_emulator/apple/tokens/revoke", ["user": "carol"])
            #expect(
                try await stack.send(.delete, "/v1/users/me", bearer: try IdentityTests.bearer(carol)).status
                    == .noContent)
            #expect(await jobs.runOnce() == 1)
            let carolID = try #require(carol["user"]?["id"]?.stringValue)
            let outcome = try await stack.store.auditEvents(userID: carolID, limit: 5).first?.event
            #expect(outcome?.type == .appleTokenRevoked, "\(String(describing: outcome))")
        }
    }

    /// A notification as Apple would send it (not delivered by the emulator).
    static func notification(
        _ stack: Stack, _ user: String, type: String, client: String = AppleDemo.clientID
    ) async throws -> String {
        let answer = try await stack.emulator(
            "/_emulator/apple/notifications",
            ["user": .string(user), "type": .string(type), "client_id": .string(client), "deliver": false])
        return try #require(answer["payload"]?.stringValue, "\(answer)")
    }

    static func deliver(_ stack: Stack, _ payload: String) async throws -> TestResponse {
        try await stack.post("/v1/apple/notifications", json: ["payload": .string(payload)])
    }

    @Test("a notification's time: event_time in milliseconds, else iat; one not believable is iat")
    func notificationTime() {
        let iat: TimeInterval = 1_800_000_000
        let at = { (ms: Int?) in AppleNotificationService.issuedAt(eventTimeMilliseconds: ms, iat: iat) }
        #expect(at(nil) == Date(timeIntervalSince1970: iat))
        #expect(at(1_799_999_000_250) == Date(timeIntervalSince1970: 1_799_999_000.25))
        // Up to a second after iat (rounding), not later: a time after the token is not believed.
        #expect(at(1_800_000_000_999) == Date(timeIntervalSince1970: 1_800_000_000.999))
        #expect(at(1_800_000_002_000) == Date(timeIntervalSince1970: iat))
        // Before 2001, or in seconds by mistake (1.8e9 ms is 1970): not believed.
        #expect(at(1_800_000_000) == Date(timeIntervalSince1970: iat))
        #expect(at(-5) == Date(timeIntervalSince1970: iat))
    }

    @Test("a consent-revoked older than the identity's last sign-in ends no session and keeps the token")
    func lateRevocation() async throws {
        try await Stack.run(apple: true, IdentityTests.configure) { stack in
            _ = try await Self.signIn(stack, "alice")
            // Issued now, delivered late (or retried) after the person signed in again.
            let late = try await Self.notification(stack, "alice", type: "consent-revoked")
            stack.clock.advance(120)
            let again = try await Self.signIn(stack, "alice")
            let subject = try #require(try await stack.appleTokens().last?["user"]?.stringValue)
            let delivered = try await Self.deliver(stack, late)
            #expect(delivered.status == .ok, "\(String(buffer: delivered.body))")
            #expect(try await stack.get("/v1/users/me", bearer: try IdentityTests.bearer(again)).status == .ok)
            #expect(try await stack.store.identityState(provider: "apple", subject: subject)?.revokedAt == nil)
            #expect(
                try await stack.store.providerTokenSavedAt(
                    provider: "apple", subject: subject, clientID: AppleDemo.clientID) != nil,
                "the newer authorization's token is kept, to be revoked at account deletion")
            // A newer one applies.
            stack.clock.advance(60)
            #expect(
                try await Self.deliver(stack, try await Self.notification(stack, "alice", type: "consent-revoked"))
                    .status == .ok)
            #expect(
                try await stack.get("/v1/users/me", bearer: try IdentityTests.bearer(again)).status == .unauthorized)
        }
    }

    @Test("notifications: consent revoked, email forwarding, account deleted; replays answered 200, forged refused")
    func notifications() async throws {
        try await Stack.run(apple: true, IdentityTests.configure) { stack in
            let alice = try await Self.signIn(stack, "alice")
            let aliceID = try #require(alice["user"]?["id"]?.stringValue)
            let subject = try #require(try await stack.appleTokens().first?["user"]?.stringValue)
            // Consent revoked: the session ends, the identity is marked until the next sign-in.
            let revoked = try await Self.notification(stack, "alice", type: "consent-revoked")
            #expect(try await Self.deliver(stack, revoked).status == .ok)
            #expect(
                try await stack.get("/v1/users/me", bearer: try IdentityTests.bearer(alice)).status == .unauthorized)
            #expect(try await stack.store.identityState(provider: "apple", subject: subject)?.revokedAt != nil)
            // The same notification again (Apple retries until it gets a 2xx): answered 200,
            // nothing changed.
            let replay = try await Self.deliver(stack, revoked)
            #expect(replay.status == .ok, "\(String(buffer: replay.body))")
            let again = try await Self.signIn(stack, "alice")
            #expect(again["user"]?["id"] == .string(aliceID))
            #expect(try await stack.store.identityState(provider: "apple", subject: subject)?.revokedAt == nil)
            // Email forwarding.
            #expect(
                try await Self.deliver(stack, try await Self.notification(stack, "alice", type: "email-disabled"))
                    .status == .ok)
            #expect(
                try await stack.store.identityState(provider: "apple", subject: subject)?.emailForwardingDisabled
                    == true)
            #expect(
                try await Self.deliver(stack, try await Self.notification(stack, "alice", type: "email-enabled")).status
                    == .ok)
            #expect(
                try await stack.store.identityState(provider: "apple", subject: subject)?.emailForwardingDisabled
                    == false)
            let types = try await stack.store.auditEvents(userID: aliceID, limit: 3).map(\.event.type)
            #expect(types.contains(.identityEmailDisabled) && types.contains(.identityEmailEnabled))
            // Forged: the claims changed under Apple's signature.
            let honest = try await Self.notification(stack, "alice", type: "account-delete")
            let parts = honest.split(separator: ".").map(String.init)
            var claims = try JSONValue.decode(try #require(Base64URL.decode(parts[1]))).objectValue ?? [:]
            claims["jti"] = "forged-jti"
            let forged = [parts[0], Base64URL.encode(JSONValue.object(claims).encoded()), parts[2]].joined(
                separator: ".")
            #expect(try await Self.deliver(stack, forged).errorCode == "apple_notification_invalid")
            #expect(try await Self.deliver(stack, "not-a-jws").errorCode == "apple_notification_invalid")
            // For a client this server does not serve.
            let other = try await stack.emulator(
                "/_emulator/apple/notifications",
                ["user": "alice", "type": "account-delete", "client_id": "com.example.other", "deliver": false])
            if let payload = other["payload"]?.stringValue {
                #expect(try await Self.deliver(stack, payload).errorCode == "apple_notification_invalid")
            }
            // Account deleted, and Apple was the only way in: the user goes.
            #expect(try await Self.deliver(stack, honest).status == .ok)
            #expect(try await stack.store.user(id: aliceID) == nil)
            let tombstone = try await stack.store.auditEvents(userID: aliceID, limit: 3).map(\.event)
            #expect(tombstone.map(\.type) == [.userDeleted] && tombstone.first?.detail["by"] == "provider")
            // `account-deleted`, the other spelling, for a user with another way in: only Apple goes.
            let bob = try await IdentityTests.signIn(stack, "bob")
            #expect(try await Self.link(stack, "bob", bearer: try IdentityTests.bearer(bob)).status == .ok)
            #expect(
                try await Self.deliver(stack, try await Self.notification(stack, "bob", type: "account-deleted")).status
                    == .ok)
            let bobID = try #require(bob["user"]?["id"]?.stringValue)
            #expect(try await stack.store.user(id: bobID)?.identities.map(\.provider) == ["facebook"])
        }
    }
}
