import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import Logging
import NIOCore
import Testing

/// Guests, linking, conflicts and their tickets, merging and deleting accounts, over HTTP with
/// the emulator, on the test database (`LATCHKEY_TEST_DATABASE`).
@Suite("Identities: guests, linking, merging, deleting")
struct IdentityTests {
    /// Both demo apps served, guests on, a property users may write.
    static func configure(_ configuration: inout ServerConfiguration) {
        configuration.facebook.apps = [
            .init(id: Demo.appID, secret: Demo.secret),
            .init(id: Demo.otherAppID, secret: "second-app-secret-change-me"),
        ]
        configuration.identities.anonymousUsers = true
        configuration.users.writableProperties = ["favourite"]
    }

    /// Signs in with a classic token of `user` for `app`: the answer's body.
    static func signIn(_ stack: Stack, _ user: String, app: String = Demo.appID) async throws -> JSONValue {
        let response = try await stack.signIn(["accessToken": .string(try await stack.facebookToken(user, app: app))])
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try response.json()
    }

    static func bearer(_ body: JSONValue) throws -> String {
        try #require(body["session"]?["access_token"]?.stringValue)
    }

    static func claims(_ accessToken: String) throws -> JSONValue {
        let part = try #require(accessToken.split(separator: ".").dropFirst().first)
        return try JSONValue.decode(try #require(Base64URL.decode(String(part))))
    }

    @Test("guests are off by default; on, a guest links an identity and keeps its id and properties")
    func guestThenLink() async throws {
        try await Stack.run { stack in
            let off = try await stack.post("/v1/auth/anonymous", json: [:])
            #expect(off.status == .notFound && off.errorCode == "not_found")
        }
        try await Stack.run(Self.configure) { stack in
            let guest = try await stack.post("/v1/auth/anonymous", json: [:]).json()
            #expect(guest["isNewUser"] == true && guest["user"]?["isAnonymous"] == true)
            #expect(guest["user"]?["identities"] == [])
            let token = try Self.bearer(guest)
            #expect(try Self.claims(token)["is_anonymous"] == true)
            let id = try #require(guest["user"]?["id"]?.stringValue)
            #expect(try await stack.get("/v1/users/me", bearer: token).json()["isAnonymous"] == true)
            let patched = try await stack.send(
                .patch, "/v1/users/me", bearer: token, json: ["properties": ["favourite": "tea"]])
            #expect(patched.status == .ok)
            let linked = try await stack.send(
                .post, "/v1/users/me/identities", bearer: token,
                json: ["accessToken": .string(try await stack.facebookToken("alice"))])
            #expect(linked.status == .ok, "\(String(buffer: linked.body))")
            let user = try #require(try linked.json()["user"])
            #expect(user["id"]?.stringValue == id && user["isAnonymous"] == false)
            #expect(user["properties"]?["favourite"] == "tea" && user["properties"]?["name"] == "Alice Liddell")
            let identity = try #require(user["identities"]?.arrayValue?.first)
            #expect(identity["provider"] == "facebook" && identity["appId"] == .string(Demo.appID))
            #expect(identity["firstSignInAt"] == .int(1_800_000_000) && identity["lastSignInAt"] == .int(1_800_000_000))
            // The next refresh's token no longer says guest; signing in finds the same account.
            let refreshed = try await SessionTests.refresh(
                stack, try #require(guest["session"]?["refresh_token"]?.stringValue)
            ).json()
            #expect(try Self.claims(try #require(refreshed["access_token"]?.stringValue))["is_anonymous"] == nil)
            #expect(try await Self.signIn(stack, "alice")["user"]?["id"]?.stringValue == id)
            // Linking it again changes nothing.
            let again = try await stack.send(
                .post, "/v1/users/me/identities", bearer: token,
                json: ["accessToken": .string(try await stack.facebookToken("alice"))])
            #expect(try again.json()["user"]?["identities"]?.arrayValue?.count == 1)
        }
    }

    @Test("a guest's bearer on POST /v1/auth/facebook upgrades the guest; anyone else's is ignored")
    func guestUpgradeBySignIn() async throws {
        try await Stack.run(Self.configure) { stack in
            let guest = try await stack.post("/v1/auth/anonymous", json: [:]).json()
            let id = try #require(guest["user"]?["id"]?.stringValue)
            let token = try await stack.facebookToken("bob")
            let upgraded = try await stack.signIn(
                ["accessToken": .string(token)], bearer: try Self.bearer(guest))
            #expect(upgraded.status == .ok, "\(String(buffer: upgraded.body))")
            let body = try upgraded.json()
            #expect(body["user"]?["id"]?.stringValue == id && body["isNewUser"] == false)
            #expect(body["user"]?["isAnonymous"] == false)
            #expect(try Self.claims(try Self.bearer(body))["is_anonymous"] == nil)
            // A full user's bearer is not needed to sign in: carol signs in to her own account.
            let carol = try await stack.signIn(
                ["accessToken": .string(try await stack.facebookToken("carol"))], bearer: try Self.bearer(body))
            #expect(try carol.json()["user"]?["id"]?.stringValue != id && carol.status == .ok)
            // The guest's token, issued before the upgrade, is held to the window like any other
            // once the user is a full one: no identity added from a stale session.
            stack.clock.advance(601)
            let stale = try await stack.signIn(
                ["accessToken": .string(try await stack.facebookToken("dave"))], bearer: try Self.bearer(guest))
            #expect(stale.status == .forbidden && stale.errorCode == "reauthentication_required")
            // A bearer that does not verify is refused rather than ignored.
            let bad = try await stack.signIn(["accessToken": .string(token)], bearer: "not-a-token")
            #expect(bad.status == .unauthorized && bad.errorCode == "unauthorized")
            // Another scheme (a proxy's Basic credentials) is not a bearer, and is ignored.
            let basic = try await stack.post(
                "/v1/auth/facebook", json: ["accessToken": .string(token)], headers: [.authorization: "Basic eDp5"])
            #expect(basic.status == .ok)
        }
    }

    @Test("link, unlink, and never the last identity; several apps on one account")
    func linkAndUnlink() async throws {
        try await Stack.run(Self.configure) { stack in
            let alice = try await Self.signIn(stack, "alice")
            let token = try Self.bearer(alice)
            let limited = try await stack.send(
                .post, "/v1/users/me/identities", bearer: token,
                json: [
                    "idToken": .string(try await stack.idToken("alice")), "nonce": .string(Demo.rawNonce),
                ])
            // Limited Login's subject for the same app is the same identity.
            #expect(try limited.json()["user"]?["identities"]?.arrayValue?.count == 1)
            let second = try await stack.send(
                .post, "/v1/users/me/identities", bearer: token,
                json: ["accessToken": .string(try await stack.facebookToken("alice", app: Demo.otherAppID))])
            let identities = try #require(try second.json()["user"]?["identities"]?.arrayValue)
            #expect(Set(identities.compactMap { $0["appId"]?.stringValue }) == [Demo.appID, Demo.otherAppID])
            let first = try #require(alice["user"]?["identities"]?.arrayValue?.first?["subject"]?.stringValue)
            let other = try #require(
                identities.first { $0["appId"] == .string(Demo.otherAppID) }?["subject"]?.stringValue)
            let missing = try await stack.send(
                .delete, "/v1/users/me/identities/facebook/123", bearer: token)
            #expect(missing.status == .notFound && missing.errorCode == "not_found")
            let removed = try await stack.send(
                .delete, "/v1/users/me/identities/facebook/\(first)", bearer: token)
            #expect(try removed.json()["user"]?["identities"]?.arrayValue?.count == 1)
            let last = try await stack.send(.delete, "/v1/users/me/identities/facebook/\(other)", bearer: token)
            #expect(last.status == .conflict && last.errorCode == "last_sign_in_method")
            #expect(try await stack.get("/v1/users/me", bearer: token).json()["identities"]?.arrayValue?.count == 1)
            let events = try await stack.store.auditEvents(
                userID: try #require(alice["user"]?["id"]?.stringValue), limit: 10
            ).map(\.event.type)
            #expect(events.prefix(2) == [.identityUnlinked, .identityLinked])
        }
    }

    @Test("a stale session adds no identity and removes none; re-proving a linked one renews it")
    func reauthentication() async throws {
        try await Stack.run(Self.configure) { stack in
            let alice = try await Self.signIn(stack, "alice")
            stack.clock.advance(601)
            let refreshed = try await SessionTests.refresh(
                stack, try #require(alice["session"]?["refresh_token"]?.stringValue)
            ).json()
            let fresh = try #require(refreshed["access_token"]?.stringValue)
            let bob = try await stack.facebookToken("bob")
            let add = try await stack.send(
                .post, "/v1/users/me/identities", bearer: fresh, json: ["accessToken": .string(bob)])
            #expect(add.status == .forbidden && add.errorCode == "reauthentication_required")
            // Nor does a stale session learn of a conflict, or get a ticket.
            _ = try await Self.signIn(stack, "carol")
            let carol = try await stack.facebookToken("carol")
            let taken = try await stack.send(
                .post, "/v1/users/me/identities", bearer: fresh, json: ["accessToken": .string(carol)])
            let ticket = try taken.json()["error"]?["linkTicket"]
            #expect(taken.errorCode == "reauthentication_required" && ticket == nil)
            // Re-proving alice's own identity is the fresh sign-in; then bob links.
            let again = try await stack.send(
                .post, "/v1/users/me/identities", bearer: fresh,
                json: ["accessToken": .string(try await stack.facebookToken("alice"))])
            #expect(again.status == .ok)
            let added = try await stack.send(
                .post, "/v1/users/me/identities", bearer: fresh, json: ["accessToken": .string(bob)])
            #expect(added.status == .ok)
            stack.clock.advance(601)
            let subject = try #require(alice["user"]?["identities"]?.arrayValue?.first?["subject"]?.stringValue)
            let refreshedAgain = try await SessionTests.refresh(
                stack, try #require(refreshed["refresh_token"]?.stringValue)
            ).json()
            let later = try #require(refreshedAgain["access_token"]?.stringValue)
            let removed = try await stack.send(
                .delete, "/v1/users/me/identities/facebook/\(subject)", bearer: later)
            #expect(removed.status == .forbidden && removed.errorCode == "reauthentication_required")
        }
    }

    @Test("a conflict answers a ticket; signing in as the owner and completing merges the accounts")
    func conflictAndMerge() async throws {
        try await Stack.run(Self.configure) { stack in
            let alice = try await Self.signIn(stack, "alice")
            let aliceID = try #require(alice["user"]?["id"]?.stringValue)
            let bob = try await Self.signIn(stack, "bob")
            let bobID = try #require(bob["user"]?["id"]?.stringValue)
            let bobToken = try Self.bearer(bob)
            _ = try await stack.send(
                .patch, "/v1/users/me", bearer: bobToken, json: ["properties": ["favourite": "coffee"]])
            let aliceCredential = try await stack.facebookToken("alice")
            let conflict = try await stack.send(
                .post, "/v1/users/me/identities", bearer: bobToken,
                json: ["accessToken": .string(aliceCredential)])
            #expect(conflict.status == .conflict && conflict.errorCode == "identity_already_linked")
            let text = String(buffer: conflict.body)
            #expect(!text.contains(aliceID) && !text.contains("Alice"), "the other account is never revealed")
            let ticket = try #require(try conflict.json()["error"]?["linkTicket"]?.stringValue)
            // The owner signs in with the same credential and completes.
            let owner = try await stack.signIn(["accessToken": .string(aliceCredential)]).json()
            let ownerToken = try Self.bearer(owner)
            let merged = try await stack.send(
                .post, "/v1/users/me/identities/complete", bearer: ownerToken,
                json: ["linkTicket": .string(ticket)])
            #expect(merged.status == .ok, "\(String(buffer: merged.body))")
            let body = try merged.json()
            #expect(body["mergedUserId"]?.stringValue == bobID && body["user"]?["id"]?.stringValue == aliceID)
            #expect(body["user"]?["identities"]?.arrayValue?.count == 2)
            #expect(body["user"]?["properties"]?["name"] == "Alice Liddell", "the caller's properties win")
            #expect(body["user"]?["properties"]?["favourite"] == "coffee", "the merged account's fill the gaps")
            // Bob's account is gone with its sessions; his Facebook signs in to Alice's account now.
            #expect(try await stack.get("/v1/users/me", bearer: bobToken).errorCode == "session_revoked")
            let refresh = try await SessionTests.refresh(
                stack, try #require(bob["session"]?["refresh_token"]?.stringValue))
            #expect(refresh.errorCode == "refresh_token_invalid")
            #expect(try await Self.signIn(stack, "bob")["user"]?["id"]?.stringValue == aliceID)
            let event = try await stack.store.auditEvents(userID: aliceID, limit: 10).first {
                $0.event.type == .userMerged
            }
            #expect(event?.event.detail["from"] == .string(bobID) && event?.event.detail["to"] == .string(aliceID))
            // Replayed.
            let replay = try await stack.send(
                .post, "/v1/users/me/identities/complete", bearer: ownerToken,
                json: ["linkTicket": .string(ticket)])
            #expect(replay.status == .badRequest && replay.errorCode == "link_ticket_invalid")
        }
    }

    @Test("a guest's conflict at sign-in gets a ticket too, and the merge takes the guest in")
    func guestConflict() async throws {
        try await Stack.run(Self.configure) { stack in
            let alice = try await Self.signIn(stack, "alice")
            let guest = try await stack.post("/v1/auth/anonymous", json: [:]).json()
            let guestID = try #require(guest["user"]?["id"]?.stringValue)
            _ = try await stack.send(
                .patch, "/v1/users/me", bearer: try Self.bearer(guest), json: ["properties": ["favourite": "x"]])
            let credential = try await stack.facebookToken("alice")
            let conflict = try await stack.signIn(["accessToken": .string(credential)], bearer: try Self.bearer(guest))
            #expect(conflict.status == .conflict && conflict.errorCode == "identity_already_linked")
            let ticket = try #require(try conflict.json()["error"]?["linkTicket"]?.stringValue)
            let done = try await stack.send(
                .post, "/v1/users/me/identities/complete", bearer: try Self.bearer(alice),
                json: ["linkTicket": .string(ticket)])
            #expect(try done.json()["mergedUserId"]?.stringValue == guestID)
            #expect(try done.json()["user"]?["properties"]?["favourite"] == "x")
            #expect(try await stack.get("/v1/users/me", bearer: try Self.bearer(guest)).errorCode == "session_revoked")
        }
    }

    @Test("a ticket that is forged, expired or for another pair is refused and changes nothing")
    func badTickets() async throws {
        try await Stack.run(Self.configure) { stack in
            let alice = try await Self.signIn(stack, "alice")
            let bob = try await Self.signIn(stack, "bob")
            let carol = try await Self.signIn(stack, "carol")
            let conflict = try await stack.send(
                .post, "/v1/users/me/identities", bearer: try Self.bearer(bob),
                json: ["accessToken": .string(try await stack.facebookToken("alice"))])
            let ticket = try #require(try conflict.json()["error"]?["linkTicket"]?.stringValue)
            func complete(_ ticket: String, as body: JSONValue) async throws -> TestResponse {
                try await stack.send(
                    .post, "/v1/users/me/identities/complete", bearer: try Self.bearer(body),
                    json: ["linkTicket": .string(ticket)])
            }
            // Carol does not own Alice's identity: another pair.
            #expect(try await complete(ticket, as: carol).errorCode == "link_ticket_invalid")
            // Forged: one character changed, or a sealed value of another kind.
            var bytes = Array(ticket.utf8)
            bytes[bytes.count / 2] = bytes[bytes.count / 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(
                try await complete(String(decoding: bytes, as: UTF8.self), as: alice).errorCode == "link_ticket_invalid"
            )
            #expect(try await complete("garbage", as: alice).errorCode == "link_ticket_invalid")
            let empty = try await complete("", as: alice)
            #expect(empty.status == .badRequest && empty.errorCode == "invalid_request")
            // Expired.
            stack.clock.advance(601)
            let fresh = try await Self.signIn(stack, "alice")
            let expired = try await complete(ticket, as: fresh)
            #expect(expired.status == .badRequest && expired.errorCode == "link_ticket_invalid")
            // Nothing changed: both accounts are whole.
            let bobID = try #require(bob["user"]?["id"]?.stringValue)
            #expect(try await stack.store.user(id: bobID)?.identities.count == 1)
            #expect(try await Self.signIn(stack, "bob")["user"]?["id"]?.stringValue == bobID)
        }
    }

    @Test("deleting an account ends everything at once, revokes at Facebook in the background, retried")
    func deleteAccount() async throws {
        try await Stack.run(Self.configure) { stack in
            let alice = try await Self.signIn(stack, "alice")
            let aliceID = try #require(alice["user"]?["id"]?.stringValue)
            let token = try Self.bearer(alice)
            let facebookToken = try await stack.facebookToken("alice")
            // Too long after the sign-in.
            stack.clock.advance(601)
            let late = try await stack.send(.delete, "/v1/users/me", bearer: token)
            #expect(late.status == .forbidden && late.errorCode == "reauthentication_required")
            // A fresh sign-in's session may.
            let fresh = try await Self.signIn(stack, "alice")
            try await stack.emulatorDelete("/_emulator/calls")
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "/{id}/permissions", "preset": "server_error", "count": 1])
            let deleted = try await stack.send(.delete, "/v1/users/me", bearer: try Self.bearer(fresh))
            #expect(deleted.status == .noContent)
            #expect(try await stack.get("/v1/users/me", bearer: token).errorCode == "session_revoked")
            let refresh = try await SessionTests.refresh(
                stack, try #require(alice["session"]?["refresh_token"]?.stringValue))
            #expect(refresh.errorCode == "refresh_token_invalid")
            #expect(try await stack.store.auditEvents(userID: aliceID, limit: 10).map(\.event.type) == [.userDeleted])
            // The revocation: Facebook fails once, the job waits, then succeeds.
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let jobs = JobService(
                store: stack.store, configuration: stack.configuration,
                revoker: FacebookPermissionRevoker(
                    configuration: stack.configuration, client: HTTPClient.shared, logger: logger),
                appleRevoker: AppleTokenRevoker(
                    configuration: stack.configuration, store: stack.store, client: .shared, logger: logger),
                logger: logger)
            #expect(await jobs.runOnce() == 1)
            #expect(await jobs.runOnce() == 0, "waiting for its retry")
            stack.clock.advance(JobService.retryDelay(afterAttempts: 1))
            #expect(await jobs.runOnce() == 1)
            let calls = try await stack.emulatorGET("/_emulator/calls")["calls"]
            #expect(calls?["/{id}/permissions"] == 2)
            let events = try await stack.store.auditEvents(userID: aliceID, limit: 10)
            #expect(events.map(\.event.type) == [.facebookPermissionsRevoked, .userDeleted])
            #expect(events.first?.event.detail["outcome"] == "revoked")
            // Facebook forgot the app: the person's token for it no longer works.
            let me = try await stack.signIn(["accessToken": .string(facebookToken)])
            #expect(me.status == .unauthorized && me.errorCode == "facebook_app_removed")
            // Signing in again later makes a new user.
            let again = try await Self.signIn(stack, "alice")
            #expect(again["isNewUser"] == true && again["user"]?["id"]?.stringValue != aliceID)
        }
    }

    @Test("a guest deletes itself without a recent sign-in")
    func guestDeletion() async throws {
        try await Stack.run(Self.configure) { stack in
            let guest = try await stack.post("/v1/auth/anonymous", json: [:]).json()
            stack.clock.advance(86_400)
            let refreshed = try await SessionTests.refresh(
                stack, try #require(guest["session"]?["refresh_token"]?.stringValue)
            ).json()
            let token = try #require(refreshed["access_token"]?.stringValue)
            #expect(try Self.claims(token)["is_anonymous"] == true)
            #expect(try await stack.send(.delete, "/v1/users/me", bearer: token).status == .noContent)
        }
    }
}

/// One person across several Facebook apps of one business (`token_for_business`).
@Suite("Identities: one person across a business's apps")
struct BusinessJoinTests {
    @Test("a first sign-in through the second app lands on the first app's user, classic and Limited Login")
    func joins() async throws {
        try await Stack.run(IdentityTests.configure) { stack in
            let first = try await IdentityTests.signIn(stack, "alice")
            let id = try #require(first["user"]?["id"]?.stringValue)
            try await stack.emulatorDelete("/_emulator/calls")
            let second = try await IdentityTests.signIn(stack, "alice", app: Demo.otherAppID)
            #expect(second["user"]?["id"]?.stringValue == id && second["isNewUser"] == false)
            let apps = second["user"]?["identities"]?.arrayValue?.compactMap { $0["appId"]?.stringValue }
            #expect(Set(apps ?? []) == [Demo.appID, Demo.otherAppID])
            // Its session is the first app's user's.
            #expect(try IdentityTests.claims(try IdentityTests.bearer(second))["sub"] == first["user"]?["id"])
            // One Graph call for the token; a returning sign-in asks nothing more.
            let counts = try await stack.emulatorGET("/_emulator/calls")["calls"]
            #expect(counts?["/{id}"] == 1)
            _ = try await IdentityTests.signIn(stack, "alice", app: Demo.otherAppID)
            #expect(try await stack.emulatorGET("/_emulator/calls")["calls"]?["/{id}"] == 1)
            // Limited Login: bob signs in through app 2's id token first, then app 1 classic.
            let limited = try await stack.signIn([
                "idToken": .string(try await Self.idToken(stack, "bob", app: Demo.otherAppID)),
                "nonce": .string(Demo.rawNonce),
            ]).json()
            let bobID = try #require(limited["user"]?["id"]?.stringValue)
            let classic = try await IdentityTests.signIn(stack, "bob")
            #expect(classic["user"]?["id"]?.stringValue == bobID)
            // Two different people never join.
            let carol = try await IdentityTests.signIn(stack, "carol", app: Demo.otherAppID)
            #expect(carol["user"]?["id"]?.stringValue != id && carol["user"]?["id"]?.stringValue != bobID)
        }
    }

    @Test("linking a person's second-app identity to another account is the conflict it is, with a ticket")
    func linkSplittingAPerson() async throws {
        try await Stack.run(IdentityTests.configure) { stack in
            let alice = try await IdentityTests.signIn(stack, "alice")
            let aliceID = try #require(alice["user"]?["id"]?.stringValue)
            let bob = try await IdentityTests.signIn(stack, "bob")
            let bobID = try #require(bob["user"]?["id"]?.stringValue)
            // Bob's account links Alice's identity in the business's other app.
            let split = try await stack.send(
                .post, "/v1/users/me/identities", bearer: try IdentityTests.bearer(bob),
                json: ["accessToken": .string(try await stack.facebookToken("alice", app: Demo.otherAppID))])
            #expect(split.status == .conflict && split.errorCode == "identity_already_linked")
            #expect(!String(buffer: split.body).contains(aliceID))
            let ticket = try #require(try split.json()["error"]?["linkTicket"]?.stringValue)
            #expect(try await stack.store.user(id: bobID)?.identities.count == 1, "nothing linked")
            // Alice completes it: Bob's account is merged into hers.
            let merged = try await stack.send(
                .post, "/v1/users/me/identities/complete",
                bearer: try IdentityTests.bearer(try await IdentityTests.signIn(stack, "alice")),
                json: ["linkTicket": .string(ticket)])
            #expect(merged.status == .ok, "\(String(buffer: merged.body))")
            #expect(try merged.json()["mergedUserId"]?.stringValue == bobID)
            // Her second-app identity signs in to her one account.
            let second = try await IdentityTests.signIn(stack, "alice", app: Demo.otherAppID)
            #expect(second["user"]?["id"]?.stringValue == aliceID)
        }
    }

    @Test("off, or for an app outside any business, each app's identity gets its own user")
    func offAndOutside() async throws {
        try await Stack.run({
            IdentityTests.configure(&$0)
            $0.facebook.joinByBusiness = false
        }) { stack in
            let first = try await IdentityTests.signIn(stack, "alice")
            let second = try await IdentityTests.signIn(stack, "alice", app: Demo.otherAppID)
            #expect(second["user"]?["id"] != first["user"]?["id"] && second["isNewUser"] == true)
            #expect(try await stack.emulatorGET("/_emulator/calls")["calls"]?["/{id}"] == nil)
        }
        try await Stack.run(emulatorSeed: { $0.apps[1].business = nil }, IdentityTests.configure) { stack in
            let first = try await IdentityTests.signIn(stack, "alice")
            // Facebook answers an error for the token: not a failure of the sign-in.
            let second = try await IdentityTests.signIn(stack, "alice", app: Demo.otherAppID)
            #expect(second["user"]?["id"] != first["user"]?["id"] && second["isNewUser"] == true)
        }
    }

    @Test("Easy Login joins too: a person known through the second app lands on that user")
    func easyLogin() async throws {
        try await Stack.run(browsable: true, { IdentityTests.configure(&$0) }) { stack in
            let first = try await IdentityTests.signIn(stack, "alice", app: Demo.otherAppID)
            let request = AuthorizeRequest()
            let answer = try await EasyLoginTests.redirect(stack, request, choose: "emulator_user=alice")
            let issued = try JSONDecoder().decode(
                SessionBody.self,
                from: Data(
                    try await stack.postForm("/v1/oauth/token", request.tokenForm(code: try #require(answer["code"])))
                        .body.readableBytesView))
            let me = try await stack.get("/v1/users/me", bearer: issued.accessToken).json()
            #expect(me["id"] == first["user"]?["id"] && me["identities"]?.arrayValue?.count == 2)
        }
    }

    /// A Limited Login id token of `user` for `app`, with the default nonce.
    static func idToken(_ stack: Stack, _ user: String, app: String) async throws -> String {
        let body: JSONValue = [
            "app_id": .string(app), "user": .string(user), "scopes": ["email"],
            "nonce": .string(Demo.nonceClaim(Demo.rawNonce)),
        ]
        return try #require(try await stack.emulator("/_emulator/id-tokens", body)["id_token"]?.stringValue)
    }
}

extension Stack {
    /// Any request, with a bearer token and a JSON body when given.
    @discardableResult
    func send(
        _ method: HTTPRequest.Method, _ path: String, bearer: String?, json: JSONValue? = nil
    ) async throws -> TestResponse {
        var headers = HTTPFields()
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        if json != nil { headers[.contentType] = "application/json" }
        return try await server.execute(
            uri: path, method: method, headers: headers, body: json.map { ByteBuffer(bytes: $0.encoded()) })
    }

    /// `POST /v1/auth/facebook` with a bearer token beside the credential.
    func signIn(_ body: JSONValue, bearer: String) async throws -> TestResponse {
        try await post("/v1/auth/facebook", json: body, headers: [.authorization: "Bearer \(bearer)"])
    }
}
