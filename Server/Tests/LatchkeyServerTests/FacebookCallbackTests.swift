import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyServer
import LatchkeyShared
import NIOCore
import Testing

/// Facebook's deauthorize and data-deletion callbacks, sent by the emulator to a running server
/// as Facebook sends them, on every backend (`TestStores`).
@Suite("Facebook callbacks: deauthorize and data deletion")
struct FacebookCallbackTests {
    /// Has the emulator send a callback for `user` to the server; the emulator's report.
    static func send(
        _ stack: Stack, _ kind: String, user: String, tamper: String? = nil
    ) async throws -> JSONValue {
        var body: [String: JSONValue] = [
            "app_id": .string(Demo.appID), "user": .string(user),
            "url": .string(stack.serverURL.absoluteString + "/v1/facebook/" + kind),
        ]
        if let tamper { body["tamper"] = .string(tamper) }
        return try await stack.emulator("/_emulator/callbacks/" + kind, .object(body))
    }

    /// Posts `signedRequest` to the callback `kind` directly.
    static func post(_ stack: Stack, _ kind: String, _ signedRequest: String) async throws -> TestResponse {
        try await stack.postForm("/v1/facebook/" + kind, [("signed_request", signedRequest)])
    }

    /// A signed request as Facebook makes one, for `user_id`, issued at `issuedAt`.
    static func signed(_ userID: String, issuedAt: Date, algorithm: String = "HMAC-SHA256") -> String {
        SignedRequest.sign(
            payload: [
                "user_id": .string(userID), "algorithm": .string(algorithm),
                "issued_at": .int(Int(issuedAt.timeIntervalSince1970)),
            ], secret: Demo.secret)
    }

    /// Signs `user` in with a classic token: the user id and the session body.
    static func signIn(_ stack: Stack, _ user: String = "alice") async throws -> (id: String, session: JSONValue) {
        let body = try await stack.signIn(["accessToken": .string(try await stack.facebookToken(user))]).json()
        return (try #require(body["user"]?["id"]?.stringValue), try #require(body["session"]))
    }

    /// The app-scoped id of `user` as the server stored it.
    static func subject(_ stack: Stack, userID: String) async throws -> String {
        try #require(try await stack.store.user(id: userID)?.identities.first?.subject)
    }

    @Test("deauthorize marks the identity and ends the sessions it opened; a guest's or other sessions stay")
    func deauthorize() async throws {
        try await Stack.run(browsable: true) { stack in
            let (userID, first) = try await Self.signIn(stack)
            let (_, second) = try await Self.signIn(stack)
            let (bobID, bob) = try await Self.signIn(stack, "bob")
            let subject = try await Self.subject(stack, userID: userID)

            let report = try await Self.send(stack, "deauthorize", user: "alice")
            #expect(report["status"] == 200, "\(report)")
            #expect(try await stack.store.identityState(provider: "facebook", subject: subject)?.revokedAt != nil)
            for session in [first, second] {
                let token = try #require(session["access_token"]?.stringValue)
                #expect(try await stack.get("/v1/users/me", bearer: token).errorCode == "session_revoked")
            }
            #expect(try await stack.get("/v1/users/me", bearer: bob["access_token"]?.stringValue ?? "").status == .ok)
            let events = try await stack.store.auditEvents(userID: userID, limit: 1).map(\.event)
            #expect(events.first?.type == .identityConsentRevoked)
            #expect(events.first?.detail["sessions_ended"] == 2)
            // The same request again (Facebook retrying a delivery) changes nothing, and is answered alike.
            let again = try await Self.post(stack, "deauthorize", try #require(report["signed_request"]?.stringValue))
            #expect(again.status == .ok)
            // Signing in again is consenting again, and a removal Facebook issued before that
            // sign-in, delivered after it, is out of date: it ends nothing.
            stack.clock.advance(5)
            let (_, fresh) = try await Self.signIn(stack)
            #expect(try await stack.store.identityState(provider: "facebook", subject: subject)?.revokedAt == nil)
            let stale = Self.signed(subject, issuedAt: stack.clock.now.addingTimeInterval(-3))
            #expect(try await Self.post(stack, "deauthorize", stale).status == .ok)
            let freshBearer = try #require(fresh["access_token"]?.stringValue)
            #expect(try await stack.get("/v1/users/me", bearer: freshBearer).status == .ok)
            #expect(try await stack.store.identityState(provider: "facebook", subject: subject)?.revokedAt == nil)
            _ = bobID
        }
    }

    @Test("with all-sessions, deauthorize ends every session of the user, Apple's too")
    func deauthorizeAll() async throws {
        try await Stack.run(browsable: true, apple: true, { $0.facebook.deauthorizeEnds = .allSessions }) { stack in
            let (userID, facebook) = try await Self.signIn(stack)
            let linked = try await AppleIdentityTests.link(
                stack, "alice", bearer: try #require(facebook["access_token"]?.stringValue))
            #expect(linked.status == .ok)
            let apple = try await AppleIdentityTests.signIn(stack)
            _ = try await Self.send(stack, "deauthorize", user: "alice")
            #expect(try await stack.store.sessions(userID: userID, now: stack.clock.now, limit: 10).isEmpty)
            let appleBearer = try #require(apple["session"]?["access_token"]?.stringValue)
            #expect(try await stack.get("/v1/users/me", bearer: appleBearer).errorCode == "session_revoked")
        }
    }

    @Test(
        "tampered, wrong algorithm, stale, future, unknown app and malformed requests are typed 400s that change nothing"
    )
    func refusals() async throws {
        try await Stack.run(browsable: true) { stack in
            let (userID, session) = try await Self.signIn(stack)
            let subject = try await Self.subject(stack, userID: userID)
            for tamper in ["signature", "algorithm", "secret"] {
                for kind in ["deauthorize", "data-deletion"] {
                    let report = try await Self.send(stack, kind, user: "alice", tamper: tamper)
                    #expect(report["status"] == 400, "\(kind) \(tamper)")
                    let error = try JSONValue.decode(Data((report["body"]?.stringValue ?? "").utf8))
                    #expect(error["error"]?["code"] == "signed_request_invalid", "\(kind) \(tamper)")
                }
            }
            let now = stack.clock.now
            let cases: [(String, String)] = [
                (Self.signed(subject, issuedAt: now.addingTimeInterval(-86_401)), "signed_request_expired"),
                (Self.signed(subject, issuedAt: now.addingTimeInterval(120)), "signed_request_expired"),
                (Self.signed(subject, issuedAt: now, algorithm: "HMAC-SHA1"), "signed_request_invalid"),
                // Facebook writes it one way only: a re-spelling is not Facebook.
                (Self.signed(subject, issuedAt: now, algorithm: "hmac-sha256"), "signed_request_invalid"),
                (Self.signed(subject, issuedAt: now, algorithm: "HMAC-SHA256 "), "signed_request_invalid"),
                (
                    SignedRequest.sign(
                        payload: ["user_id": .string(subject), "algorithm": "HMAC-SHA256"], secret: Demo.secret),
                    "signed_request_invalid"
                ),
                (
                    SignedRequest.sign(
                        payload: [
                            "user_id": .string(subject), "algorithm": "HMAC-SHA256",
                            "issued_at": .int(Int(now.timeIntervalSince1970)),
                        ],
                        secret: "another-app's-secret"), "signed_request_invalid"
                ),
                ("not.a.signed.request", "signed_request_invalid"),
                ("=====", "signed_request_invalid"),
            ]
            for (request, code) in cases {
                for kind in ["deauthorize", "data-deletion"] {
                    let answer = try await Self.post(stack, kind, request)
                    #expect(answer.status == .badRequest && answer.errorCode == code, "\(kind) \(request)")
                }
            }
            // Nothing changed: the session lives, no request exists, and each refusal is an audit row.
            #expect(
                try await stack.get("/v1/users/me", bearer: session["access_token"]?.stringValue ?? "").status == .ok)
            #expect(try await stack.store.deletionRequests(status: nil, limit: 10).isEmpty)
            #expect(try await stack.store.identityState(provider: "facebook", subject: subject)?.revokedAt == nil)
            // Padded and unpadded base64url both verify (the MAC covers the payload as sent).
            let padded = Self.signed(subject, issuedAt: now).split(separator: ".").map(String.init)
            let withPadding = padded[0] + "=." + padded[1]
            #expect(try await Self.post(stack, "deauthorize", withPadding).status == .ok)
        }
    }

    @Test("data deletion under `delete`: the only way in takes the user; the status page says done")
    func deleteOnlyWayIn() async throws {
        try await Stack.run(browsable: true) { stack in
            let (userID, session) = try await Self.signIn(stack)
            let report = try await Self.send(stack, "data-deletion", user: "alice")
            #expect(report["valid_response"] == true, "\(report)")
            let answer = try JSONValue.decode(Data((report["body"]?.stringValue ?? "").utf8))
            let code = try #require(answer["confirmation_code"]?.stringValue)
            let url = try #require(answer["url"]?.stringValue)
            #expect(url == stack.serverURL.absoluteString + "/v1/facebook/data-deletion/" + code)
            #expect(try await Self.page(stack, code).contains("In progress"))
            // The same request again answers the same code.
            let repeated = try await Self.post(
                stack, "data-deletion", try #require(report["signed_request"]?.stringValue))
            #expect(try repeated.json()["confirmation_code"]?.stringValue == code)

            #expect(await stack.jobs().runOnce() >= 1)
            #expect(try await stack.store.user(id: userID) == nil)
            #expect(
                try await stack.get("/v1/users/me", bearer: session["access_token"]?.stringValue ?? "").status != .ok)
            let page = try await Self.page(stack, code)
            #expect(page.contains("Done") && page.contains("Your data was deleted."))
            // After it was carried out, asking again (nothing held any more) answers the same code.
            let later = try await Self.send(stack, "data-deletion", user: "alice")
            let laterCode = try JSONValue.decode(Data((later["body"]?.stringValue ?? "").utf8))["confirmation_code"]
            #expect(laterCode?.stringValue == code)
            // Alice signs up again a second later: the first request, delivered once more, is not
            // about her new account, which stays.
            stack.clock.advance(2)
            let (newID, _) = try await Self.signIn(stack)
            let replayed = try await Self.post(
                stack, "data-deletion", try #require(report["signed_request"]?.stringValue))
            #expect(try replayed.json()["confirmation_code"]?.stringValue == code)
            await stack.jobs().runOnce()
            #expect(try await stack.store.user(id: newID) != nil)
        }
    }

    @Test("`delete` with another way in, and `unlink`, take the identity and Facebook's properties only")
    func removeIdentity() async throws {
        for policy in [DeletionPolicy.delete, .unlink] {
            try await Stack.run(browsable: true, apple: true, { $0.facebook.dataDeletionPolicy = policy }) { stack in
                let (userID, facebook) = try await Self.signIn(stack)
                let bearer = try #require(facebook["access_token"]?.stringValue)
                #expect(try await stack.store.user(id: userID)?.properties["name"] != nil)
                #expect(try await AppleIdentityTests.link(stack, "alice", bearer: bearer).status == .ok)
                _ = try await stack.store.updateProperties(
                    userID: userID, properties: ["theme": "dark"], now: stack.clock.now)
                let apple = try await AppleIdentityTests.signIn(stack)
                _ = try await Self.send(stack, "data-deletion", user: "alice")
                await stack.jobs().runOnce()
                let user = try #require(try await stack.store.user(id: userID), "\(policy)")
                #expect(user.identities.map(\.provider) == ["apple"], "\(policy)")
                // Facebook's properties went (Apple's own mapping may write `email` again later).
                #expect(user.properties["name"] == nil && user.properties["picture"] == nil, "\(policy)")
                #expect(user.properties["theme"] == "dark", "\(policy): the app's own property stays")
                // The Facebook session ended; the Apple one goes on.
                #expect(try await stack.get("/v1/users/me", bearer: bearer).errorCode == "session_revoked", "\(policy)")
                let appleBearer = try #require(apple["session"]?["access_token"]?.stringValue)
                #expect(try await stack.get("/v1/users/me", bearer: appleBearer).status == .ok, "\(policy)")
            }
        }
        // `unlink` never takes the user, even when Facebook was the only way in.
        try await Stack.run(browsable: true, { $0.facebook.dataDeletionPolicy = .unlink }) { stack in
            let (userID, _) = try await Self.signIn(stack)
            _ = try await Self.send(stack, "data-deletion", user: "alice")
            await stack.jobs().runOnce()
            #expect(try await stack.store.user(id: userID)?.identities.isEmpty == true)
        }
    }

    @Test("`queue`: received until an operator decides; approved it runs as delete, refused the page shows why")
    func queue() async throws {
        try await Stack.run(browsable: true, { $0.facebook.dataDeletionPolicy = .queue }) { stack in
            let (aliceID, _) = try await Self.signIn(stack)
            let (bobID, _) = try await Self.signIn(stack, "bob")
            let alice = try await Self.code(try await Self.send(stack, "data-deletion", user: "alice"))
            let bob = try await Self.code(try await Self.send(stack, "data-deletion", user: "bob"))
            #expect(await stack.jobs().runOnce() == 0)
            #expect(try await Self.page(stack, alice).contains("Received"))
            let queued = try await stack.store.deletionRequests(status: .received, limit: 10)
            #expect(queued.count == 2 && queued.allSatisfy { $0.policy == .queue })

            let now = stack.clock.now
            let approved = try await stack.store.decideDeletionRequest(
                id: try #require(queued.first { $0.code == alice }?.id), .approve, now: now, by: .commandLine)
            #expect(approved?.status == .inProgress)
            _ = try await stack.store.decideDeletionRequest(
                id: try #require(queued.first { $0.code == bob }?.id),
                .refuse(reason: "Records we must keep <for 7 years> by law."), now: now, by: .commandLine)
            await stack.jobs().runOnce()
            #expect(try await stack.store.user(id: aliceID) == nil)
            #expect(try await stack.store.user(id: bobID) != nil)
            let refused = try await Self.page(stack, bob)
            #expect(refused.contains("Refused") && refused.contains("Records we must keep &lt;for 7 years&gt; by law."))
            #expect(try await Self.page(stack, alice).contains("Your data was deleted."))
            // A refused request stands: asking again shows the same page.
            #expect(try await Self.code(try await Self.send(stack, "data-deletion", user: "bob")) == bob)
        }
    }

    @Test("a person Latchkey holds nothing about gets a code like anyone; its page says nothing was held")
    func unknownPerson() async throws {
        try await Stack.run(browsable: true) { stack in
            let code = try await Self.code(try await Self.send(stack, "data-deletion", user: "carol"))
            await stack.jobs().runOnce()
            #expect(try await Self.page(stack, code).contains("No data about you was held"))
            let deauthorized = try await Self.send(stack, "deauthorize", user: "carol")
            #expect(deauthorized["status"] == 200)
            let missing = try await stack.server.execute(uri: "/v1/facebook/data-deletion/nope", method: .get)
            #expect(missing.status == .notFound)
            #expect(String(buffer: missing.body).contains("No data deletion request has this confirmation code"))
        }
    }

    /// The confirmation code of the emulator's report of a data-deletion callback.
    static func code(_ report: JSONValue) async throws -> String {
        let answer = try JSONValue.decode(Data((report["body"]?.stringValue ?? "").utf8))
        return try #require(answer["confirmation_code"]?.stringValue)
    }

    /// The status page of `code`, checked for its headers.
    static func page(_ stack: Stack, _ code: String) async throws -> String {
        let response = try await stack.server.execute(uri: "/v1/facebook/data-deletion/\(code)", method: .get)
        #expect(response.status == .ok)
        #expect(response.headers[.contentType] == "text/html; charset=utf-8")
        #expect(response.headers[.cacheControl] == "no-store")
        #expect(response.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'none'") == true)
        return String(buffer: response.body)
    }
}

extension FacebookCallbackTests {
    @Test("a deletion answered before a restart is carried out after it, even one whose job a dead node had leased")
    func survivesRestart() async throws {
        try await TestStores.withServerStore { store in
            let clock = TestClock()
            // Both servers open the signing keys sealed in the database with the same key.
            let kek = KeyEncryptionKey.generate().key
            let sameKey: @Sendable (inout ServerConfiguration) -> Void = { $0.secrets.keyEncryptionKey = kek }
            // The first server: the request is answered, and a node takes its job and dies with it.
            try await Stack.run(clock: clock, browsable: true, store: store, sameKey) { stack in
                _ = try await Self.signIn(stack)
                _ = try await Self.code(try await Self.send(stack, "data-deletion", user: "alice"))
                let leased = try await stack.store.claimJobs(
                    now: clock.now, leaseUntil: clock.now.addingTimeInterval(300), limit: 10)
                #expect(leased.map(\.kind) == [.dataDeletion])
            }
            // The next server on the same database: the job waits out the dead node's lease, then runs.
            try await Stack.run(clock: clock, browsable: true, store: store, sameKey) { stack in
                let request = try #require(try await stack.store.deletionRequests(status: .inProgress, limit: 10).first)
                let userID = try #require(request.userID)
                #expect(try await Self.page(stack, request.code).contains("In progress"))
                #expect(await stack.jobs().runOnce() == 0)
                clock.advance(301)
                // The deletion, then the revocation of the app's permissions it queued.
                #expect(await stack.jobs().runOnce() == 2)
                #expect(try await stack.store.user(id: userID) == nil)
                #expect(try await Self.page(stack, request.code).contains("Your data was deleted."))
            }
        }
    }
}
