import FacebookEmulator
import Foundation
import HummingbirdTesting
import LatchkeyAPI
import Testing

@Suite("Classic access-token exchange")
struct ClassicLoginTests {
    @Test("first login creates the user with the default mapping; a repeat login finds it")
    func firstAndRepeat() async throws {
        try await Stack.run { stack in
            let first = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            #expect(first.status == .ok)
            let body = try first.json()
            #expect(body["isNewUser"] == true)
            #expect(body["grantedPermissions"] == ["email", "public_profile"])
            let user = try #require(body["user"])
            #expect(user["properties"]?["email"] == "alice@example.com")
            #expect(user["properties"]?["firstName"] == "Alice")
            #expect(user["identities"]?.arrayValue?.first?["subject"] == .string(appScopedID("alice")))
            #expect(body["session"]?["token_type"] == "Bearer")
            #expect(body["session"]?["expires_in"] == 900)

            let again = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).json()
            #expect(again["isNewUser"] == false)
            #expect(again["user"]?["id"] == user["id"])
        }
    }

    @Test("a request's fieldsMapping maps Facebook fields onto chosen properties, flattened")
    func customMapping() async throws {
        try await Stack.run({ $0.users.clientMappableProperties = nil }) { stack in
            let token = try await stack.facebookToken(scopes: [
                "email", "user_birthday", "user_location", "user_age_range",
            ])
            let body = try await stack.signIn([
                "accessToken": .string(token),
                "fieldsMapping": [
                    "birthday": "dob", "location": "city", "age_range": "ageRange", "picture": "avatar",
                    "email": "mail",
                ],
            ]).json()
            let properties = try #require(body["user"]?["properties"])
            #expect(properties["dob"] == "05/04/1992")
            #expect(properties["city"] == "London, United Kingdom")
            #expect(properties["ageRange"] == ["min": 21])
            #expect(properties["avatar"]?.stringValue?.hasPrefix("http") == true)
            #expect(properties["mail"] == "alice@example.com")
            #expect(properties["email"] == nil)
        }
    }

    @Test("by default a client may map only onto the default mapping's properties")
    func defaultMappableProperties() async throws {
        try await Stack.run { stack in
            let token = try await stack.facebookToken()
            let refused = try await stack.signIn([
                "accessToken": .string(token), "fieldsMapping": ["first_name": "role"],
            ])
            #expect(refused.status == .forbidden && refused.errorCode == "property_not_writable")
            let allowed = try await stack.signIn(["accessToken": .string(token), "fieldsMapping": ["email": "email"]])
            #expect(allowed.status == .ok)
        }
    }

    @Test("mapping errors: unknown field, reserved or malformed property, disallowed property")
    func mappingErrors() async throws {
        try await Stack.run({ $0.users.clientMappableProperties = ["email", "dob"] }) { stack in
            let token = try await stack.facebookToken()
            for (mapping, code) in [
                (["shoe_size": "shoes"], "invalid_request"), (["email": "id"], "invalid_request"),
                (["email": "has space"], "invalid_request"), (["name": "fullName"], "property_not_writable"),
            ] as [([String: String], String)] {
                let response = try await stack.signIn([
                    "accessToken": .string(token), "fieldsMapping": .object(mapping.mapValues(JSONValue.string)),
                ])
                #expect(response.errorCode == code, "\(mapping)")
            }
        }
    }

    @Test(
        "each Facebook revocation keeps its reason, with or without Facebook's subcode",
        arguments: [
            ("password_changed", "facebook_password_changed"), ("logged_out", "facebook_logged_out"),
            ("app_removed", "facebook_app_removed"), ("invalidated", "facebook_token_invalid"),
            ("expired", "facebook_token_expired"),
        ], [true, false])
    func revoked(reason: (name: String, code: String), sendsSubcode: Bool) async throws {
        try await Stack.run { stack in
            let token = try await stack.facebookToken()
            if reason.name == "expired" {
                _ = try await stack.emulator(
                    "/_emulator/tokens/expire", ["access_token": .string(token), "send_subcode": .bool(sendsSubcode)])
            } else {
                _ = try await stack.emulator(
                    "/_emulator/tokens/revoke",
                    [
                        "access_token": .string(token), "reason": .string(reason.name),
                        "send_subcode": .bool(sendsSubcode),
                    ])
            }
            let response = try await stack.signIn(["accessToken": .string(token)])
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == reason.code)
        }
    }

    @Test("expired tokens, other apps' tokens, app tokens, JWTs and junk are refused with their codes")
    func otherRejections() async throws {
        try await Stack.run { stack in
            let short = try await stack.emulator(
                "/_emulator/tokens", ["app_id": .string(Demo.appID), "user": "alice", "lifetime_seconds": 60])
            stack.clock.advance(61)
            let expired = try await stack.signIn(["accessToken": short["access_token"] ?? .null])
            #expect(expired.errorCode == "facebook_token_expired")

            let foreign = try await stack.facebookToken(app: Demo.otherAppID)
            #expect(try await stack.signIn(["accessToken": .string(foreign)]).errorCode == "facebook_token_wrong_app")

            let appToken = "\(Demo.appID)|\(Demo.secret)"
            #expect(try await stack.signIn(["accessToken": .string(appToken)]).errorCode == "facebook_token_not_user")

            let jwt = try await stack.idToken()
            let misplaced = try await stack.signIn(["accessToken": .string(jwt)])
            #expect(misplaced.status == .badRequest && misplaced.errorCode == "id_token_sent_as_access_token")

            #expect(try await stack.signIn(["accessToken": "EAAjunk"]).errorCode == "facebook_token_invalid")
        }
    }

    @Test("exactly two Facebook calls per classic login")
    func twoCalls() async throws {
        try await Stack.run { stack in
            let token = try await stack.facebookToken()
            try await stack.emulatorDelete("/_emulator/calls")
            _ = try await stack.signIn(["accessToken": .string(token)])
            let calls = try await stack.emulatorGET("/_emulator/calls")["calls"]
            #expect(calls == ["/debug_token": 1, "/me": 1])
        }
    }
}

/// The app-scoped id the emulator gives `key` in the demo app.
func appScopedID(_ key: String, app: String = Demo.appID) -> String {
    appScopedUserID(appID: app, personKey: key)
}
