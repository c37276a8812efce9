import Foundation
import LatchkeyAPI
import Testing

@testable import FacebookEmulator

/// The scenarios: a person removes the app, a person asks for their data to be deleted, each
/// played against an app backend at the URLs the app registered.
@Suite("Scenarios: remove the app, request deletion")
struct ScenarioTests {
    /// Registers the backend's callback URLs on the demo app.
    static func register(_ emulator: EmulatorClient, _ base: String, deletion: String = "/deletion/ok") async throws {
        let response = try await emulator.post(
            "/_emulator/apps/\(Demo.appID)/callbacks",
            json: [
                "deauthorize_callback_url": .string(base + "/deauthorize"),
                "data_deletion_callback_url": .string(base + deletion),
            ])
        #expect(response.status == .ok)
    }

    static func removeApp(_ emulator: EmulatorClient, _ body: JSONValue) async throws -> TestResponseJSON {
        let response = try await emulator.post("/_emulator/scenarios/remove-app", json: body)
        return TestResponseJSON(status: Int(response.status.code), json: try response.json())
    }

    static func requestDeletion(_ emulator: EmulatorClient, _ body: JSONValue) async throws -> TestResponseJSON {
        let response = try await emulator.post("/_emulator/scenarios/request-deletion", json: body)
        return TestResponseJSON(status: Int(response.status.code), json: try response.json())
    }

    @Test("remove-app: the grant and every token of the person die, then a signed deauthorize goes out")
    func removeApp() async throws {
        try await AppBackend.run { base, log in
            try await withEmulator { emulator in
                try await Self.register(emulator, base)
                let tokens = [try await emulator.mintToken(), try await emulator.mintToken()]
                let bobs = try await emulator.mintToken("bob")

                let report = try await Self.removeApp(emulator, ["app_id": .string(Demo.appID), "user": "alice"])
                #expect(report.status == 200)
                #expect(report.json["removed"] == true && report.json["tokens_revoked"] == 2)
                #expect(report.json["user_id"] == .string(Demo.id("alice")))
                #expect(report.json["callback"]?["status"] == 200)
                #expect(report.json["callback"]?["url"] == .string(base + "/deauthorize"))

                for token in tokens {
                    let data = try await emulator.debug(token)
                    #expect(data["is_valid"] == false && data["error"]?["subcode"] == 458)
                }
                #expect(try await emulator.debug(bobs)["is_valid"] == true)
                let received = try #require(await log.callbacks.first)
                #expect(received.path == "/deauthorize")
                let payload = try #require(CallbackTests.verify(received.signedRequest, secret: Demo.secret))
                #expect(payload["user_id"] == .string(Demo.id("alice")))
                #expect(payload["expires"] == nil)

                // Removing it again: nothing left to remove, the callback goes out all the same.
                let again = try await Self.removeApp(emulator, ["app_id": .string(Demo.appID), "user": "alice"])
                #expect(again.json["removed"] == false && again.json["tokens_revoked"] == 0)
                #expect(await log.callbacks.count == 2)
            }
        }
    }

    @Test("remove-app without a registered URL is refused and removes nothing; `url` overrides")
    func removeAppWithoutURL() async throws {
        try await AppBackend.run { base, log in
            try await withEmulator { emulator in
                let token = try await emulator.mintToken()
                let refused = try await Self.removeApp(emulator, ["app_id": .string(Demo.appID), "user": "alice"])
                #expect(refused.status == 409 && refused.json["error"]?["code"] == "no_callback_url")
                #expect(try await emulator.debug(token)["is_valid"] == true)

                let given = try await Self.removeApp(
                    emulator, ["app_id": .string(Demo.appID), "user": "alice", "url": .string(base + "/deauthorize")])
                #expect(given.json["callback"]?["status"] == 200)
                #expect(await log.callbacks.map(\.path) == ["/deauthorize"])

                for (body, code) in [
                    (["app_id": "999", "user": "alice"], "unknown_app"),
                    (["app_id": .string(Demo.appID), "user": "nobody"], "unknown_user"),
                    (["app_id": .string(Demo.appID), "user": "alice", "url": "ftp://x"], "invalid_field"),
                    (
                        ["app_id": .string(Demo.appID), "user": "alice", "url": "http://x", "timeout_ms": 5],
                        "invalid_field"
                    ),
                ] as [(JSONValue, String)] {
                    #expect(try await Self.removeApp(emulator, body).json["error"]?["code"] == .string(code), "\(body)")
                }
            }
        }
    }

    @Test("remove-app for an unreachable backend still removes the app, and reports the failed delivery")
    func removeAppUnreachable() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let report = try await Self.removeApp(
                emulator,
                ["app_id": .string(Demo.appID), "user": "alice", "url": "http://127.0.0.1:1/x", "timeout_ms": 300])
            #expect(report.status == 200 && report.json["removed"] == true)
            #expect(report.json["callback"]?["error"]?.stringValue?.contains("could not deliver") == true)
            #expect(try await emulator.debug(token)["is_valid"] == false)
        }
    }

    @Test("request-deletion: a signed callback, the answer checked, the status page fetched")
    func requestDeletion() async throws {
        try await AppBackend.run { base, log in
            try await withEmulator { emulator in
                try await Self.register(emulator, base)
                let token = try await emulator.mintToken()
                let report = try await Self.requestDeletion(emulator, ["app_id": .string(Demo.appID), "user": "bob"])
                #expect(report.status == 200)
                #expect(report.json["valid_response"] == true, "\(report.json)")
                #expect(report.json["problems"] == [])
                #expect(report.json["confirmation_code"] == "code-ok")
                #expect(report.json["status_url"]?.stringValue?.hasSuffix("/status/ok") == true)
                let page = try #require(report.json["status_page"])
                #expect(page["status"] == 200 && page["content_type"] == "text/html; charset=utf-8")
                #expect(page["body"]?.stringValue?.contains("In progress") == true && page["truncated"] == false)

                let received = try #require(await log.callbacks.first)
                let payload = try #require(CallbackTests.verify(received.signedRequest, secret: Demo.secret))
                #expect(payload["user_id"] == .string(Demo.id("bob")) && payload["expires"] == 1_800_003_600)
                // Asking for deletion changes nothing at Facebook.
                #expect(try await emulator.debug(token)["is_valid"] == true)
            }
        }
    }

    @Test("a redirecting status page is reported, not followed; a big one is cut at 4 KiB")
    func statusPages() async throws {
        try await AppBackend.run { base, _ in
            try await withEmulator { emulator in
                let moved = try await Self.requestDeletion(
                    emulator,
                    ["app_id": .string(Demo.appID), "user": "bob", "url": .string(base + "/deletion/moved")])
                #expect(moved.json["valid_response"] == true)
                #expect(moved.json["status_page"]?["status"] == 302)
                #expect(moved.json["status_page"]?["location"] == "http://127.0.0.1:1/elsewhere")

                let big = try await Self.requestDeletion(
                    emulator, ["app_id": .string(Demo.appID), "user": "bob", "url": .string(base + "/deletion/big")])
                #expect(big.json["status_page"]?["truncated"] == true)
                #expect(big.json["status_page"]?["body"]?.stringValue?.utf8.count == StatusPage.bodyLimit)
            }
        }
    }

    @Test("an answer Facebook would refuse, or none, is reported with its problems; nothing is fetched")
    func invalidAnswers() async throws {
        try await AppBackend.run { base, _ in
            try await withEmulator { emulator in
                try await Self.register(emulator, base, deletion: "/deletion-without-code")
                let withoutCode = try await Self.requestDeletion(
                    emulator, ["app_id": .string(Demo.appID), "user": "bob"])
                #expect(withoutCode.status == 200 && withoutCode.json["valid_response"] == false)
                #expect(withoutCode.json["problems"] == ["no 'confirmation_code'"])
                #expect(withoutCode.json["status_page"] == .null)

                // The deauthorize route answers `{}`: no url, no code.
                let empty = try await Self.requestDeletion(
                    emulator, ["app_id": .string(Demo.appID), "user": "bob", "url": .string(base + "/deauthorize")])
                #expect(empty.json["problems"] == ["no 'url'", "no 'confirmation_code'"])

                let missing = try await Self.requestDeletion(
                    emulator, ["app_id": .string(Demo.appID), "user": "bob", "url": .string(base + "/nowhere")])
                #expect(missing.json["problems"]?.arrayValue?.first?.stringValue?.hasPrefix("status 404") == true)

                let unreachable = try await Self.requestDeletion(
                    emulator,
                    ["app_id": .string(Demo.appID), "user": "bob", "url": "http://127.0.0.1:1/x", "timeout_ms": 300])
                #expect(unreachable.status == 200 && unreachable.json["valid_response"] == false)
                #expect(unreachable.json["callback"]?["error"] != nil)
            }
        }
    }

    @Test("a bare app-scoped id of nobody the emulator holds still gets its callbacks")
    func bareID() async throws {
        try await AppBackend.run { base, log in
            try await withEmulator { emulator in
                try await Self.register(emulator, base)
                let removed = try await Self.removeApp(emulator, ["app_id": .string(Demo.appID), "user": "1234567"])
                #expect(removed.json["removed"] == false && removed.json["user_id"] == "1234567")
                let deletion = try await Self.requestDeletion(
                    emulator, ["app_id": .string(Demo.appID), "user": "1234567"])
                #expect(deletion.json["valid_response"] == true)
                #expect(await log.callbacks.count == 2)
            }
        }
    }
}

/// A control answer's status and body.
struct TestResponseJSON {
    let status: Int
    let json: JSONValue
}
