import Foundation
import HummingbirdTesting
import Testing

@testable import FacebookEmulator

@Suite("debug_token")
struct DebugTokenTests {
    @Test("a valid user token reports app, type, user, scopes, 60-day and 90-day expiries")
    func validToken() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken(scopes: ["email", "user_birthday"])
            let data = try await emulator.debug(token)
            let now = 1_800_000_000
            #expect(data["is_valid"] == true)
            #expect(data["app_id"] == .string(Demo.appID))
            #expect(data["type"] == "USER")
            #expect(data["application"] == "Latchkey Demo")
            #expect(data["user_id"] == .string(Demo.id("alice")))
            #expect(data["scopes"] == ["email", "public_profile", "user_birthday"])
            #expect(data["issued_at"] == .int(now))
            #expect(data["expires_at"] == .int(now + 5_184_000))
            #expect(data["data_access_expires_at"] == .int(now + 7_776_000))
            #expect(data["error"] == nil)
        }
    }

    @Test("expiry by clock gives HTTP 200, is_valid false and error 190/463")
    func expired() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken(lifetime: 3600)
            try await emulator.post("/_emulator/clock", json: ["advance_seconds": 3600])
            let data = try await emulator.debug(token)
            #expect(data["is_valid"] == false)
            #expect(data["error"]?["code"] == 190)
            #expect(data["error"]?["subcode"] == 463)
            #expect(
                data["error"]?["message"]?.stringValue?.hasPrefix(
                    "Error validating access token: Session has expired on ") == true)
            #expect(data["user_id"] == .string(Demo.id("alice")))
        }
    }

    @Test(
        "each revocation reason has its own subcode",
        arguments: [
            ("password_changed", 460), ("logged_out", 467), ("app_removed", 458), ("invalidated", 466),
        ])
    func revoked(reason: String, subcode: Int) async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let response = try await emulator.post(
                "/_emulator/tokens/revoke",
                json: ["app_id": .string(Demo.appID), "user": "alice", "reason": .string(reason)])
            #expect(response.status == .ok)
            let data = try await emulator.debug(token)
            #expect(data["is_valid"] == false)
            #expect(data["error"]?["subcode"] == .int(subcode))
            // The same token on Graph fails with the same subcode in the error envelope.
            let me = try await emulator.get(EmulatorClient.path("/me", [("access_token", token)]))
            #expect(me.status == .badRequest)
            let error = try me.graphError()
            #expect(error.code == 190 && error.subcode == subcode && error.type == "OAuthException")
            #expect(try me.json()["error"]?["fbtrace_id"]?.stringValue?.count == 11)
        }
    }

    @Test("an unknown token is invalid without a subcode")
    func unknownToken() async throws {
        try await withEmulator { emulator in
            let data = try await emulator.debug("EAAnot-a-token")
            #expect(
                data == [
                    "error": ["code": 190, "message": "Invalid OAuth access token - Cannot parse access token"],
                    "is_valid": false, "scopes": [],
                ])
        }
    }

    @Test("the caller must present an app token: 400 code 100 otherwise")
    func callerErrors() async throws {
        try await withEmulator { emulator in
            let user = try await emulator.mintToken()
            for caller in [nil, user, "\(Demo.appID)|wrong-secret"] as [String?] {
                var query = [("input_token", user)]
                if let caller { query.append(("access_token", caller)) }
                let response = try await emulator.get(EmulatorClient.path("/debug_token", query))
                #expect(response.status == .badRequest)
                #expect(try [100, 190].contains(response.graphError().code ?? 0))
            }
            let missing = try await emulator.get(EmulatorClient.path("/debug_token", [("access_token", Demo.appToken)]))
            #expect(try missing.graphError().code == 100)
        }
    }

    @Test("a token of another app is refused with 400 code 100, never described to the caller")
    func crossApp() async throws {
        try await withEmulator { emulator in
            let other = try await emulator.mintToken(app: Demo.proofAppID)
            let response = try await emulator.get(
                EmulatorClient.path("/debug_token", [("input_token", other), ("access_token", Demo.appToken)]))
            #expect(response.status == .badRequest)
            let error = try response.graphError()
            #expect(error.code == 100 && error.subcode == nil && error.type == "OAuthException")
            #expect(error.message == "(#100) The App_id in the input_token did not match the Viewing App")
            #expect(try response.json()["data"] == nil)
            // The owning app's own token still inspects it.
            let owner = try await emulator.get(
                EmulatorClient.path(
                    "/debug_token",
                    [("input_token", other), ("access_token", "\(Demo.proofAppID)|\(Demo.proofSecret)")]))
            #expect(try owner.json()["data"]?["app_id"] == .string(Demo.proofAppID))
            #expect(Demo.id("alice", app: Demo.proofAppID) != Demo.id("alice"))
        }
    }

    @Test("the request log keeps method, path, query and the Authorization scheme, not the credential")
    func requestLog() async throws {
        try await withEmulator { emulator in
            let user = try await emulator.mintToken()
            _ = try await emulator.get(
                EmulatorClient.path("/v21.0/debug_token", [("input_token", user)]),
                headers: [.authorization: "Bearer \(Demo.appToken)"])
            let log = try await emulator.get("/_emulator/requests").json()["requests"]?.arrayValue ?? []
            let last = try #require(log.last)
            #expect(last["endpoint"] == "/debug_token" && last["method"] == "GET")
            #expect(last["path"] == "/v21.0/debug_token")
            #expect(last["authorization_scheme"] == "Bearer")
            #expect(last["query"]?.stringValue?.contains("input_token=") == true)
            #expect(!String(decoding: last.encoded(), as: UTF8.self).contains(Demo.secret))
        }
    }

    @Test("Bearer header works as the caller token")
    func bearer() async throws {
        try await withEmulator { emulator in
            let user = try await emulator.mintToken()
            let response = try await emulator.get(
                EmulatorClient.path("/debug_token", [("input_token", user)]),
                headers: [.authorization: "Bearer \(Demo.appToken)"])
            #expect(try response.json()["data"]?["is_valid"] == true)
        }
    }
}
