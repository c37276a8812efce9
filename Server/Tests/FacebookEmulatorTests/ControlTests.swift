import Foundation
import HummingbirdTesting
import LatchkeyAPI
import Testing

@testable import FacebookEmulator

@Suite("Control API: clock, call counts, faults")
struct ControlTests {
    @Test("the overview lists apps, users with per-app ids, keys and the time")
    func overview() async throws {
        try await withEmulator { emulator in
            let body = try await emulator.get("/_emulator").json()
            #expect(body["apps"]?.arrayValue?.first?["id"] == .string(Demo.appID))
            let alice = body["users"]?.arrayValue?.first
            #expect(alice?["ids"]?[Demo.proofAppID] == .string(Demo.id("alice", app: Demo.proofAppID)))
            #expect(body["now"] == 1_800_000_000)
        }
    }

    @Test("the clock moves forward and can be set")
    func clock() async throws {
        try await withEmulator { emulator in
            #expect(
                try await emulator.post("/_emulator/clock", json: ["advance_seconds": 90]).json() == [
                    "now": 1_800_000_090
                ])
            #expect(
                try await emulator.post("/_emulator/clock", json: ["now": 1_900_000_000]).json() == [
                    "now": 1_900_000_000
                ])
            #expect(try await emulator.get("/_emulator/clock").json() == ["now": 1_900_000_000])
            let missing = try await emulator.post("/_emulator/clock", json: [:])
            #expect(try missing.json()["error"]?["code"] == "missing_field")
        }
    }

    @Test("calls are counted per endpoint template and can be reset")
    func callCounts() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            _ = try await emulator.debug(token)
            _ = try await emulator.get(EmulatorClient.path("/v21.0/me", [("access_token", token)]))
            _ = try await emulator.get(EmulatorClient.path("/\(Demo.id("alice"))", [("access_token", token)]))
            let calls = try await emulator.get("/_emulator/calls").json()["calls"]
            #expect(calls == ["/debug_token": 1, "/me": 1, "/{id}": 1])
            _ = try await emulator.delete("/_emulator/calls")
            #expect(try await emulator.get("/_emulator/calls").json()["calls"] == [:])
        }
    }

    @Test("a rate-limit preset fires the given number of times on its endpoint only")
    func rateLimitFault() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let added = try await emulator.post(
                "/_emulator/faults", json: ["endpoint": "/me", "preset": "rate_limit_user", "count": 2])
            #expect(added.status == .ok)
            let mePath = EmulatorClient.path("/me", [("access_token", token)])
            for _ in 0..<2 {
                let limited = try await emulator.get(mePath)
                // Captured user-limit answers are HTTP 400 with subcode 2446079.
                #expect(limited.status == .badRequest)
                let error = try limited.json()["error"]
                #expect(error?["code"] == 17 && error?["is_transient"] == true && error?["error_subcode"] == 2_446_079)
            }
            #expect(try await emulator.debug(token)["is_valid"] == true)
            #expect(try await emulator.get(mePath).status == .ok)
            #expect(try await emulator.get("/_emulator/faults").json() == ["faults": []])
        }
    }

    @Test(
        "presets and custom errors answer in Facebook's envelope",
        arguments: [
            ("server_error", 500, 2), ("unknown_error", 500, 1), ("transient", 400, 2), ("rate_limit_app", 403, 4),
            ("rate_limit_custom", 403, 613),
        ])
    func presets(preset: String, status: Int, code: Int) async throws {
        try await withEmulator { emulator in
            _ = try await emulator.post(
                "/_emulator/faults", json: ["endpoint": "/debug_token", "preset": .string(preset)])
            let response = try await emulator.get(
                EmulatorClient.path("/debug_token", [("input_token", "x"), ("access_token", Demo.appToken)]))
            #expect(response.status.code == status)
            #expect(try response.graphError().code == code)
            _ = try await emulator.delete("/_emulator/faults")
            #expect(try await emulator.debug("x")["is_valid"] == false)
        }
    }

    @Test("custom errors carry code, subcode, status and is_transient; latency-only faults pass through")
    func customAndLatency() async throws {
        try await withEmulator { emulator in
            _ = try await emulator.post(
                "/_emulator/faults",
                json: [
                    "endpoint": "/oauth/access_token", "code": 190, "subcode": 463, "status": 401, "message": "nope",
                    "count": 1,
                ])
            let failed = try await emulator.get("/oauth/access_token")
            #expect(failed.status == .unauthorized)
            let error = try failed.graphError()
            #expect(error.code == 190 && error.subcode == 463 && error.message == "nope")
            // A latency fault delays but answers normally (its timing is a benchmark's concern, not a test's).
            _ = try await emulator.post("/_emulator/faults", json: ["endpoint": "*", "latency_ms": 1, "count": 1])
            #expect(try await emulator.debug("x")["is_valid"] == false)
        }
    }

    @Test("bad fault requests are refused with codes")
    func badFaults() async throws {
        try await withEmulator { emulator in
            for body: JSONValue in [
                ["endpoint": "/nope", "preset": "transient"], ["preset": "volcano"], ["endpoint": "/me"],
                ["latency_ms": -5], ["preset": "transient", "count": 0], ["code": 1, "status": 200],
                ["preset": "transient", "count": .double(1e300)], ["latency_ms": .double(.infinity)],
            ] {
                let response = try await emulator.post("/_emulator/faults", json: body)
                #expect(response.status == .badRequest)
                #expect(
                    try ["invalid_field", "missing_field"].contains(
                        response.json()["error"]?["code"]?.stringValue ?? ""))
            }
        }
    }

    @Test("out-of-range numbers are refused, never trapped on")
    func numericBounds() async throws {
        try await withEmulator { emulator in
            for (path, body) in [
                ("/_emulator/clock", ["advance_seconds": .double(1e300)]), ("/_emulator/clock", ["now": .int(.max)]),
                (
                    "/_emulator/tokens",
                    ["app_id": .string(Demo.appID), "user": "alice", "lifetime_seconds": .int(.max)]
                ),
                ("/_emulator/clock", ["advance_seconds": "1.5"]),
            ] as [(String, JSONValue)] {
                let response = try await emulator.post(path, json: body)
                #expect(try response.json()["error"]?["code"] == "invalid_field")
            }
            #expect(try await emulator.get("/_emulator/clock").json() == ["now": 1_800_000_000])
        }
    }

    @Test("minting can decline or replace permissions")
    func mintDeclinedAndReplace() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken(scopes: ["email", "user_gender"])
            let replaced = try await emulator.post(
                "/_emulator/tokens",
                json: [
                    "app_id": .string(Demo.appID), "user": "alice", "scopes": ["user_link"], "declined": ["email"],
                    "replace": true,
                ])
            #expect(try replaced.json()["scopes"] == ["public_profile", "user_link"])
            let permissions = try await emulator.get(EmulatorClient.path("/me/permissions", [("access_token", token)]))
            #expect(
                try permissions.json()["data"] == [
                    ["permission": "public_profile", "status": "granted"],
                    ["permission": "user_link", "status": "granted"], ["permission": "email", "status": "declined"],
                ])
        }
    }

    @Test("revoke and expire controls refuse tokens the emulator never issued")
    func unknownTokens() async throws {
        try await withEmulator { emulator in
            let revoke = try await emulator.post("/_emulator/tokens/revoke", json: ["access_token": "EAAnope"])
            #expect(revoke.status == .notFound)
            let expire = try await emulator.post("/_emulator/tokens/expire", json: ["access_token": "EAAnope"])
            #expect(try expire.json()["error"]?["code"] == "unknown_token")
            let token = try await emulator.mintToken()
            _ = try await emulator.post("/_emulator/tokens/expire", json: ["access_token": .string(token)])
            #expect(try await emulator.debug(token)["error"]?["subcode"] == 463)
            let unknown = try await emulator.get("/_emulator/volcano")
            #expect(try unknown.json()["error"]?["code"] == "unknown_control")
        }
    }
}
