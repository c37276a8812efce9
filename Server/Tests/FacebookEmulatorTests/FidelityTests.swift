import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import Testing

@testable import FacebookEmulator

/// Each place the emulator once differed from Facebook, asserted over HTTP in Facebook's shape:
/// status, body and headers (docs/emulator.md lists the sources).
@Suite("Fidelity: what Facebook really sends")
struct FidelityTests {
    static let usage = HTTPField.Name("X-App-Usage")!

    /// `debug_token` for `token` with the demo app's token, whatever the status.
    static func debugToken(_ emulator: EmulatorClient, _ token: String) async throws -> TestResponse {
        try await emulator.get(
            EmulatorClient.path("/debug_token", [("input_token", token), ("access_token", Demo.appToken)]))
    }

    // MARK: debug_token and another app's token

    @Test("another app's token: 400 code 100 with Facebook's words and challenge, no data, no subcode")
    func crossAppToken() async throws {
        try await withEmulator { emulator in
            let other = try await emulator.mintToken(app: Demo.proofAppID)
            let response = try await Self.debugToken(emulator, other)
            #expect(response.status == .badRequest)
            let body = try response.json()
            #expect(body["data"] == nil)
            #expect(body["error"]?["message"] == "(#100) The App_id in the input_token did not match the Viewing App")
            #expect(body["error"]?["code"] == 100 && body["error"]?["error_subcode"] == nil)
            #expect(
                response.headers[.wwwAuthenticate]
                    == #"OAuth "Facebook Platform" "invalid_request" "(#100) The App_id in the input_token did not match the Viewing App""#
            )
        }
    }

    // MARK: error_subcode, present or not

    @Test("subcodes are sent by default, and left out for a token minted with send_subcode false")
    func subcodePerToken() async throws {
        try await withEmulator { emulator in
            let with = try await emulator.mintToken(lifetime: 60)
            let minted = try await emulator.post(
                "/_emulator/tokens",
                json: ["app_id": .string(Demo.appID), "user": "alice", "lifetime_seconds": 60, "send_subcode": false])
            let without = try #require(try minted.json()["access_token"]?.stringValue)
            try await emulator.post("/_emulator/clock", json: ["advance_seconds": 61])

            let withData = try await emulator.debug(with)
            #expect(withData["error"]?["code"] == 190 && withData["error"]?["subcode"] == 463)
            let withoutData = try await emulator.debug(without)
            #expect(withoutData["is_valid"] == false && withoutData["error"]?["code"] == 190)
            #expect(withoutData["error"]?["subcode"] == nil)
            #expect(withoutData["error"]?["message"]?.stringValue?.hasPrefix("Error validating access token") == true)

            let me = try await GraphUserTests.me(emulator, without)
            #expect(me.status == .badRequest)
            let error = try me.graphError()
            #expect(error.code == 190 && error.subcode == nil)
            #expect(try me.json()["error"]?.objectValue?.keys.contains("error_subcode") == false)
            #expect(try await GraphUserTests.me(emulator, with).graphError().subcode == 463)
        }
    }

    @Test(
        "revoking or expiring with send_subcode false leaves the subcode out; the default keeps it",
        arguments: ["password_changed", "logged_out", "app_removed", "invalidated", "expire"])
    func subcodeOnRevocation(_ reason: String) async throws {
        try await withEmulator { emulator in
            for sendsSubcode in [true, false] {
                let token = try await emulator.mintToken()
                if reason == "expire" {
                    try await emulator.post(
                        "/_emulator/tokens/expire",
                        json: ["access_token": .string(token), "send_subcode": .bool(sendsSubcode)])
                } else {
                    try await emulator.post(
                        "/_emulator/tokens/revoke",
                        json: [
                            "app_id": .string(Demo.appID), "user": "alice", "reason": .string(reason),
                            "send_subcode": .bool(sendsSubcode),
                        ])
                }
                let data = try await emulator.debug(token)
                #expect(data["is_valid"] == false && data["error"]?["code"] == 190)
                #expect((data["error"]?["subcode"] != nil) == sendsSubcode, "\(reason) \(sendsSubcode)")
                let me = try await GraphUserTests.me(emulator, token)
                #expect((try me.graphError().subcode != nil) == sendsSubcode, "\(reason) \(sendsSubcode)")
                #expect(me.headers[.wwwAuthenticate]?.hasPrefix(#"OAuth "Facebook Platform" "invalid_token" "#) == true)
            }
        }
    }

    @Test("a fault with send_subcode false strips the subcode from a reused code and from debug_token's data")
    func subcodePerFault() async throws {
        try await withEmulator { emulator in
            let code = try await TokenEndpointTests.code(emulator)
            #expect(try await TokenEndpointTests.exchange(emulator, code: code).status == .ok)
            let reused = try await TokenEndpointTests.exchange(emulator, code: code)
            #expect(try reused.graphError().subcode == 36009)

            try await emulator.post(
                "/_emulator/faults", json: ["endpoint": "/oauth/access_token", "send_subcode": false, "count": 1])
            let stripped = try await TokenEndpointTests.exchange(emulator, code: code)
            #expect(stripped.status == .badRequest)
            let error = try stripped.graphError()
            #expect(
                error.code == 100 && error.subcode == nil && error.message == "This authorization code has been used.")
            // One use only: the next reuse has its subcode again.
            #expect(try await TokenEndpointTests.exchange(emulator, code: code).graphError().subcode == 36009)

            let token = try await emulator.mintToken()
            try await emulator.post("/_emulator/tokens/expire", json: ["access_token": .string(token)])
            try await emulator.post("/_emulator/faults", json: ["endpoint": "/debug_token", "send_subcode": false])
            let data = try await emulator.debug(token)
            #expect(data["error"]?["code"] == 190 && data["error"]?["subcode"] == nil)
        }
    }

    // MARK: granular_scopes

    @Test("granular_scopes leaves out public_profile and email, and is absent when nothing else was granted")
    func granularScopes() async throws {
        try await withEmulator { emulator in
            let basic = try await emulator.mintToken("bob", scopes: ["public_profile"])
            let basicData = try await emulator.debug(basic)
            #expect(basicData["scopes"] == ["public_profile"])
            #expect(basicData.objectValue?.keys.contains("granular_scopes") == false)

            let withEmail = try await emulator.mintToken("carol", scopes: ["public_profile", "email"])
            let emailData = try await emulator.debug(withEmail)
            #expect(emailData["scopes"] == ["email", "public_profile"])
            #expect(emailData.objectValue?.keys.contains("granular_scopes") == false)

            let more = try await emulator.mintToken(scopes: [
                "public_profile", "email", "user_friends", "user_birthday",
            ])
            let moreData = try await emulator.debug(more)
            #expect(moreData["scopes"] == ["email", "public_profile", "user_birthday", "user_friends"])
            #expect(moreData["granular_scopes"] == [["scope": "user_birthday"], ["scope": "user_friends"]])
        }
    }

    @Test("after the person removes the app, scopes is empty but granular_scopes keeps what was granted")
    func granularScopesAfterRemoval() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken(scopes: ["public_profile", "email", "user_friends"])
            let removed = try await emulator.delete(EmulatorClient.path("/me/permissions", [("access_token", token)]))
            #expect(removed.status == .ok)
            let data = try await emulator.debug(token)
            #expect(data["is_valid"] == false && data["error"]?["subcode"] == 458)
            #expect(data["scopes"] == [])
            #expect(data["granular_scopes"] == [["scope": "user_friends"]])
            // Other revocations keep the grant, so scopes stay listed.
            let other = try await emulator.mintToken("bob", scopes: ["public_profile", "user_friends"])
            try await emulator.post(
                "/_emulator/tokens/revoke", json: ["access_token": .string(other), "reason": "password_changed"])
            let otherData = try await emulator.debug(other)
            #expect(otherData["scopes"] == ["public_profile", "user_friends"])
            #expect(otherData["granular_scopes"] == [["scope": "user_friends"]])
        }
    }

    // MARK: WWW-Authenticate

    @Test("WWW-Authenticate accompanies OAuthException: invalid_token, invalid_code, invalid_request")
    func authenticateChallenge() async throws {
        try await withEmulator { emulator in
            let junk = try await GraphUserTests.me(emulator, "EAAjunk")
            #expect(junk.status == .badRequest)
            #expect(
                junk.headers[.wwwAuthenticate]
                    == #"OAuth "Facebook Platform" "invalid_token" "Invalid OAuth access token - Cannot parse access token""#
            )
            let code = try await TokenEndpointTests.code(emulator)
            _ = try await TokenEndpointTests.exchange(emulator, code: code)
            let reused = try await TokenEndpointTests.exchange(emulator, code: code)
            #expect(
                reused.headers[.wwwAuthenticate]
                    == #"OAuth "Facebook Platform" "invalid_code" "This authorization code has been used.""#)
            let missing = try await emulator.get(EmulatorClient.path("/debug_token", [("access_token", Demo.appToken)]))
            #expect(
                missing.headers[.wwwAuthenticate]
                    == #"OAuth "Facebook Platform" "invalid_request" "(#100) The parameter input_token is required""#)
            // Quotes in a message are escaped; a GraphMethodException carries no challenge.
            let token = try await emulator.mintToken()
            try await emulator.post(
                "/_emulator/faults",
                json: [
                    "endpoint": "/me", "code": 100, "message": #"(#100) Must include the "campaign_id" index"#,
                    "count": 1,
                ])
            let quoted = try await GraphUserTests.me(emulator, token)
            #expect(
                quoted.headers[.wwwAuthenticate]
                    == #"OAuth "Facebook Platform" "invalid_request" "(#100) Must include the \"campaign_id\" index""#)
            let proof = try await emulator.get(
                EmulatorClient.path("/me", [("access_token", token), ("appsecret_proof", "00")]))
            #expect(try proof.graphError().type == "GraphMethodException")
            #expect(proof.headers[.wwwAuthenticate] == nil)
            // Successful answers carry none.
            #expect(try await GraphUserTests.me(emulator, token).headers[.wwwAuthenticate] == nil)
        }
    }

    // MARK: Platform rate limits

    @Test("X-App-Usage is on Graph answers (errors too), not on the dialog or the key documents")
    func usageHeaderPlacement() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let me = try await GraphUserTests.me(emulator, token)
            #expect(me.headers[Self.usage] == #"{"call_count":0,"total_cputime":0,"total_time":0}"#)
            let inspected = try await Self.debugToken(emulator, token)
            #expect(inspected.status == .ok && inspected.headers[Self.usage] != nil)
            // An error answer about the app's own token carries it too.
            try await emulator.post("/_emulator/tokens/expire", json: ["access_token": .string(token)])
            let refused = try await GraphUserTests.me(emulator, token)
            #expect(refused.status == .badRequest && refused.headers[Self.usage] != nil)
            #expect(try await emulator.get("/.well-known/oauth/openid/jwks").headers[Self.usage] == nil)
            let dialog = try await emulator.get(
                EmulatorClient.path(
                    "/dialog/oauth",
                    [("client_id", Demo.appID), ("redirect_uri", Demo.redirect), ("emulator_user", "bob")]))
            #expect(dialog.headers[Self.usage] == nil)
            // A made-up token is nobody's call.
            #expect(try await GraphUserTests.me(emulator, "EAAmadeup").headers[Self.usage] == nil)
        }
    }

    @Test("the hourly budget is 200 calls per daily user: code 4 once spent, back after the hour rolls on")
    func applicationLimit() async throws {
        try await withEmulator { emulator in
            try await emulator.post("/_emulator/usage", json: ["app_id": .string(Demo.appID), "daily_active_users": 1])
            let token = try await emulator.mintToken()
            var last: TestResponse?
            for call in 1...200 {
                last = try await GraphUserTests.me(emulator, token)
                #expect(last?.status == .ok, "call \(call)")
                if call == 100 {
                    #expect(last?.headers[Self.usage] == #"{"call_count":50,"total_cputime":50,"total_time":50}"#)
                }
            }
            #expect(last?.headers[Self.usage] == #"{"call_count":100,"total_cputime":100,"total_time":100}"#)
            let throttled = try await GraphUserTests.me(emulator, token)
            #expect(throttled.status == .forbidden)
            let body = try throttled.json()["error"]
            #expect(body?["code"] == 4 && body?["is_transient"] == true && body?["error_subcode"] == nil)
            #expect(body?["message"] == "(#4) Application request limit reached")
            #expect(throttled.headers[Self.usage] == #"{"call_count":100,"total_cputime":100,"total_time":100}"#)
            #expect(
                throttled.headers[.wwwAuthenticate]
                    == #"OAuth "Facebook Platform" "invalid_request" "(#4) Application request limit reached""#)
            // The app token's calls are the same app's: also throttled.
            #expect(
                try await emulator.get(
                    EmulatorClient.path("/debug_token", [("input_token", token), ("access_token", Demo.appToken)])
                ).graphError().code == 4)
            // Another app is not.
            let otherApp = try await emulator.get(
                EmulatorClient.path("/app", [("access_token", "\(Demo.proofAppID)|\(Demo.proofSecret)")]))
            #expect(otherApp.status == .ok)
            // Throttled calls are not counted, so the window empties as the hour passes.
            try await emulator.post("/_emulator/clock", json: ["advance_seconds": 3600])
            let recovered = try await GraphUserTests.me(emulator, token)
            #expect(recovered.status == .ok)
            #expect(recovered.headers[Self.usage] == #"{"call_count":0,"total_cputime":0,"total_time":0}"#)
            let report = try await emulator.get("/_emulator/usage").json()["apps"]?[Demo.appID]
            #expect(report?["hourly_budget"] == 200 && report?["calls"] == 1)
        }
    }

    @Test("the window counts by minute: a call leaves it at the start of the sixtieth minute after its own")
    func windowBoundary() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            try await emulator.post("/_emulator/clock", json: ["advance_seconds": 30])
            for _ in 1...2 { _ = try await GraphUserTests.me(emulator, token) }
            func counted() async throws -> JSONValue? {
                try await emulator.get("/_emulator/usage").json()["apps"]?[Demo.appID]?["calls"]
            }
            #expect(try await counted() == 2)
            try await emulator.post("/_emulator/clock", json: ["advance_seconds": 3569])
            #expect(try await counted() == 2)
            try await emulator.post("/_emulator/clock", json: ["advance_seconds": 1])
            #expect(try await counted() == 0)
            // `client_id` is charged on the token endpoint only: elsewhere it names nobody.
            let free = try await emulator.get(EmulatorClient.path("/me", [("client_id", Demo.appID)]))
            #expect(free.status == .badRequest && free.headers[Self.usage] == nil)
            #expect(try await counted() == 0)
        }
    }

    @Test("one person's limit answers 17 for them while others still get through")
    func userLimit() async throws {
        try await withEmulator { emulator in
            try await emulator.post("/_emulator/usage", json: ["app_id": .string(Demo.appID), "user_hourly_limit": 3])
            let alice = try await emulator.mintToken()
            let bob = try await emulator.mintToken("bob")
            for _ in 1...3 { #expect(try await GraphUserTests.me(emulator, alice).status == .ok) }
            let throttled = try await GraphUserTests.me(emulator, alice)
            #expect(throttled.status == .badRequest)
            let error = try throttled.graphError()
            #expect(
                error.code == 17 && error.subcode == 2_446_079 && error.message == "(#17) User request limit reached")
            #expect(try throttled.json()["error"]?["is_transient"] == true)
            #expect(try await GraphUserTests.me(emulator, bob).status == .ok)
        }
    }

    @Test("pinned CPU usage throttles on its own; headers can wait for enough calls; DELETE resets")
    func pinnedUsage() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            try await emulator.post(
                "/_emulator/usage",
                json: ["app_id": .string(Demo.appID), "total_cputime": 85, "headers_after_calls": 0])
            let busy = try await GraphUserTests.me(emulator, token)
            #expect(busy.headers[Self.usage] == #"{"call_count":0,"total_cputime":85,"total_time":0}"#)
            try await emulator.post("/_emulator/usage", json: ["app_id": .string(Demo.appID), "total_time": 100])
            #expect(try await GraphUserTests.me(emulator, token).graphError().code == 4)

            try await emulator.delete("/_emulator/usage")
            try await emulator.post(
                "/_emulator/usage", json: ["app_id": .string(Demo.appID), "headers_after_calls": 3])
            #expect(try await GraphUserTests.me(emulator, token).headers[Self.usage] == nil)
            #expect(try await GraphUserTests.me(emulator, token).headers[Self.usage] == nil)
            #expect(try await GraphUserTests.me(emulator, token).headers[Self.usage] != nil)
            let refused = try await emulator.post("/_emulator/usage", json: ["app_id": "42", "daily_active_users": 1])
            #expect(refused.status == .notFound)
            let invalid = try await emulator.post(
                "/_emulator/usage", json: ["app_id": .string(Demo.appID), "daily_active_users": 0])
            #expect(invalid.status == .badRequest)
        }
    }

    @Test("faults set or remove any header; 32 and 613 stay available as faults")
    func faultHeaders() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let business =
                #"{"112233":[{"type":"pages","call_count":97,"total_cputime":3,"total_time":4,"estimated_time_to_regain_access":0}]}"#
            try await emulator.post(
                "/_emulator/faults",
                json: [
                    "endpoint": "/me", "count": 1,
                    "headers": ["X-Business-Use-Case-Usage": .string(business), "X-App-Usage": .null],
                ])
            let answer = try await GraphUserTests.me(emulator, token)
            #expect(answer.status == .ok)
            #expect(answer.headers[HTTPField.Name("X-Business-Use-Case-Usage")!] == business)
            #expect(answer.headers[Self.usage] == nil)

            // A throttle arriving without usage headers, as Facebook's sometimes do.
            try await emulator.post(
                "/_emulator/faults",
                json: ["endpoint": "/me", "preset": "rate_limit_app", "count": 1, "headers": ["X-App-Usage": .null]])
            let bare = try await GraphUserTests.me(emulator, token)
            #expect(try bare.graphError().code == 4 && bare.headers[Self.usage] == nil)

            let badName = try await emulator.post(
                "/_emulator/faults", json: ["endpoint": "/me", "headers": ["bad name": "x"]])
            #expect(badName.status == .badRequest)
            let framing = try await emulator.post(
                "/_emulator/faults", json: ["endpoint": "/me", "headers": ["Content-Length": "5"]])
            #expect(framing.status == .badRequest)
            let badValue = try await emulator.post(
                "/_emulator/faults", json: ["endpoint": "/me", "headers": ["X-Test": "a\r\nb"]])
            #expect(badValue.status == .badRequest)
        }
    }

    // MARK: Pictures

    @Test("/me/picture?redirect=false answers the picture's data; the default still redirects")
    func pictureWithoutRedirect() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            for flag in ["false", "0"] {
                let response = try await emulator.get(
                    EmulatorClient.path(
                        "/v21.0/me/picture", [("access_token", token), ("redirect", flag), ("type", "large")]))
                #expect(response.status == .ok)
                let data = try #require(try response.json()["data"])
                #expect(data["height"] == 200 && data["width"] == 200)
                #expect(data["is_silhouette"]?.boolValue != nil)
                #expect(data["url"]?.stringValue?.hasPrefix("http") == true)
                #expect(data.objectValue?.keys.sorted() == ["height", "is_silhouette", "url", "width"])
            }
            let redirect = try await emulator.get(EmulatorClient.path("/me/picture", [("access_token", token)]))
            #expect(redirect.status == .found)
        }
    }

    @Test("picture{url} selects subfields, with modifiers before the braces; unknown subfields are 100")
    func pictureSubfields() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let only = try await GraphUserTests.me(emulator, token, fields: "name,picture{url}").json()
            #expect(only["picture"]?["data"]?.objectValue?.keys.sorted() == ["url"])
            #expect(only["name"] != nil)
            let sized = try await GraphUserTests.me(emulator, token, fields: "picture.type(large){url,width}").json()
            #expect(sized["picture"]?["data"]?["width"] == 200)
            #expect(sized["picture"]?["data"]?.objectValue?.keys.sorted() == ["url", "width"])
            // Deep nesting is read in one pass: an answer, not a crash.
            let nested = String(repeating: "{", count: 5_000) + String(repeating: "}", count: 5_000)
            #expect(try await GraphUserTests.me(emulator, token, fields: "picture" + nested).status == .ok)
            let unknown = try await GraphUserTests.me(emulator, token, fields: "picture{colour}")
            #expect(try unknown.graphError().code == 100)
            #expect(
                try unknown.graphError().message
                    == "(#100) Tried accessing nonexisting field (colour) on node type (ProfilePictureSource)")
        }
    }
}
