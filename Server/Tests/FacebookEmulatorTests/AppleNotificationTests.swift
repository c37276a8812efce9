import Foundation
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import Testing

@testable import FacebookEmulator

/// What the test notification receiver saw.
actor ReceivedNotifications {
    var bodies: [String] = []
    func record(_ body: String) { bodies.append(body) }
}

@Suite("Sign in with Apple: server-to-server notifications")
struct AppleNotificationTests {
    /// The events claim: a JSON string inside the JWT's JSON, parsed a second time.
    static func events(_ token: JWTParts) throws -> JSONValue {
        try JSONValue.decode(Data(try #require(token.payload["events"]?.stringValue).utf8))
    }

    @Test("a notification is a JWS signed with Apple's key, its events a JSON string with a time in ms")
    func signed() async throws {
        try await withAppleEmulator { emulator, _ in
            let response = try await emulator.post(
                "/_emulator/apple/notifications",
                json: [
                    "user": "bob", "type": "email-disabled", "deliver": false,
                    "client_id": .string(AppleTeam.servicesID),
                ])
            let answer = try response.json()
            #expect(answer["status"] == nil)
            let token = try JWTParts(try #require(answer["payload"]?.stringValue))
            #expect(token.header["alg"] == "RS256")
            #expect(try await emulator.verifiesWithApple(token))
            #expect(token.payload["iss"] == "https://appleid.apple.com")
            #expect(token.payload["aud"] == .string(AppleTeam.servicesID))
            #expect(token.payload["iat"] == 1_800_000_000 && token.payload["exp"] == 1_800_086_400)
            #expect(token.payload["jti"] == answer["jti"])
            let events = try Self.events(token)
            #expect(events["type"] == "email-disabled")
            #expect(events["sub"] == .string(appleSubject(teamID: "LKDEVTEAM1", personKey: "bob")))
            #expect(events["event_time"] == 1_800_000_000_000)
            #expect(events["email"]?.stringValue?.hasSuffix("@privaterelay.appleid.com") == true)
            #expect(events["is_private_email"] == "true")
        }
    }

    @Test("consent revocation and account deletion revoke the person's tokens at Apple")
    func endsAuthorization() async throws {
        for type in ["consent-revoked", "account-delete", "account-deleted"] {
            try await withAppleEmulator { emulator, team in
                _ = try await emulator.appleExchange(team: team, user: "alice")
                _ = try await emulator.appleExchange(team: team, user: "bob")
                let answer = try await emulator.post(
                    "/_emulator/apple/notifications", json: ["user": "alice", "type": .string(type), "deliver": false])
                let events = try Self.events(JWTParts(try #require(try answer.json()["payload"]?.stringValue)))
                #expect(events["type"] == .string(type) && events["email"] == nil)
                let tokens = try #require(
                    try await emulator.get("/_emulator/apple/tokens").json()["tokens"]?.arrayValue)
                let alice = appleSubject(teamID: "LKDEVTEAM1", personKey: "alice")
                for token in tokens {
                    let isAlice = token["user"] == .string(alice)
                    #expect(token["revoked"] == .bool(isAlice))
                    #expect(token["revoked_by"] == (isAlice ? "notification" : .null))
                }
            }
        }
    }

    @Test("delivery POSTs {payload} to the registered URL and reports the receiver's answer")
    func delivered() async throws {
        let received = ReceivedNotifications()
        let router = Router()
        router.post("/apple/notifications") { request, _ -> Response in
            await received.record(String(buffer: try await request.body.collect(upTo: 65_536)))
            return Response(status: .ok, body: .init(byteBuffer: .init(string: "thanks")))
        }
        let receiver = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await receiver.test(.live) { client in
            let url = "http://127.0.0.1:\(try #require(client.port))/apple/notifications"
            try await withAppleEmulator(notificationURL: url) { emulator, _ in
                let answer = try await emulator.post(
                    "/_emulator/apple/notifications", json: ["user": "alice", "type": "consent-revoked"]
                ).json()
                #expect(answer["status"] == 200 && answer["body"] == "thanks")
                let body = try JSONValue.decode(Data(try #require(await received.bodies.first).utf8))
                #expect(body == ["payload": try #require(answer["payload"])])
                let token = try JWTParts(try #require(body["payload"]?.stringValue))
                #expect(token.payload["aud"] == .string(AppleTeam.bundleID))
            }
        }
    }

    @Test("bad notification requests are control errors")
    func controlErrors() async throws {
        try await withAppleEmulator { emulator, _ in
            for (body, code) in [
                (["user": "alice", "type": "password-changed", "deliver": false], "invalid_field"),
                (["user": "alice", "type": "consent-revoked"], "missing_field"),
                (["user": "alice", "type": "consent-revoked", "url": "ftp://x"], "invalid_field"),
                (["user": "zed", "type": "consent-revoked", "deliver": false], "unknown_user"),
            ] as [(JSONValue, String)] {
                let response = try await emulator.post("/_emulator/apple/notifications", json: body)
                #expect(try response.json()["error"]?["code"] == .string(code))
            }
            let unreachable = try await emulator.post(
                "/_emulator/apple/notifications",
                json: ["user": "alice", "type": "email-enabled", "url": "http://127.0.0.1:1/x", "timeout_ms": 300])
            #expect(unreachable.status == .badGateway)
        }
    }
}
