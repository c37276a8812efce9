import Foundation
import HummingbirdTesting
import LatchkeyCrypto
import Testing

@testable import FacebookEmulator

@Suite("Graph /me, /{id}, permissions, appsecret_proof")
struct GraphUserTests {
    static func me(
        _ emulator: EmulatorClient, _ token: String, fields: String? = nil, extra: [(String, String)] = []
    )
        async throws -> TestResponse
    {
        var query = [("access_token", token)] + extra
        if let fields { query.append(("fields", fields)) }
        return try await emulator.get(EmulatorClient.path("/v21.0/me", query))
    }

    @Test("without fields only id and name come back")
    func defaultFields() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let body = try await Self.me(emulator, token).json()
            #expect(body == ["id": .string(Demo.id("alice")), "name": "Alice Liddell"])
        }
    }

    @Test("fields are gated by granted permissions, nested shapes match Facebook's")
    func gatedFields() async throws {
        try await withEmulator { emulator in
            let all =
                "id,name,first_name,last_name,email,birthday,gender,link,location,hometown,age_range,picture.type(large)"
            let limited = try await emulator.mintToken(scopes: ["public_profile"])
            let limitedBody = try await Self.me(emulator, limited, fields: all).json()
            #expect(limitedBody["email"] == nil)
            #expect(limitedBody["birthday"] == nil)
            #expect(limitedBody["location"] == nil)
            #expect(limitedBody["age_range"] == nil)
            #expect(limitedBody["picture"]?["data"]?["width"] == 200)

            let full = try await emulator.mintToken(
                scopes: [
                    "email", "user_birthday", "user_gender", "user_link", "user_location", "user_hometown",
                    "user_age_range",
                ])
            let body = try await Self.me(emulator, full, fields: all).json()
            #expect(body["email"] == "alice@example.com")
            #expect(body["birthday"] == "05/04/1992")
            #expect(body["location"] == ["id": "106078429431815", "name": "London, United Kingdom"])
            #expect(body["hometown"]?["name"] == "Oxford, United Kingdom")
            #expect(body["link"] == "https://www.facebook.com/alice.liddell")
            #expect(body["age_range"] == ["min": 21])
            let url = try #require(body["picture"]?["data"]?["url"]?.stringValue)
            #expect(url.contains("/platform/profilepic/?asid=\(Demo.id("alice"))"))
        }
    }

    @Test("a person without email has no email field even with the permission")
    func noEmail() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken("carol", scopes: ["email"])
            let body = try await Self.me(emulator, token, fields: "id,email,birthday").json()
            #expect(body == ["id": .string(Demo.id("carol"))])
        }
    }

    @Test("friends lists only friends who use the app with user_friends")
    func friends() async throws {
        try await withEmulator { emulator in
            let alice = try await emulator.mintToken("alice", scopes: ["user_friends"])
            #expect(try await Self.me(emulator, alice, fields: "friends").json()["friends"]?["data"] == [])
            _ = try await emulator.mintToken("bob", scopes: ["user_friends"])
            let friends = try await Self.me(emulator, alice, fields: "friends").json()["friends"]
            #expect(friends?["data"] == [["id": .string(Demo.id("bob")), "name": "Bob Marley Smith"]])
            #expect(friends?["summary"]?["total_count"] == 1)
        }
    }

    @Test("unknown fields are Graph error 100")
    func unknownField() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let error = try await Self.me(emulator, token, fields: "id,shoe_size").graphError()
            #expect(error.code == 100)
            #expect(error.message == "(#100) Tried accessing nonexisting field (shoe_size) on node type (User)")
        }
    }

    @Test("the token may come as Bearer header or in a form body")
    func tokenTransports() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let bearer = try await emulator.get("/me?fields=id", headers: [.authorization: "Bearer \(token)"])
            #expect(try bearer.json()["id"] == .string(Demo.id("alice")))
            let unversioned = try await emulator.get(EmulatorClient.path("/me", [("access_token", token)]))
            #expect(unversioned.status == .ok)
            let noToken = try await emulator.get("/me")
            #expect(try noToken.graphError().code == 2500)
        }
    }

    @Test("appsecret_proof: required by the app, checked whenever sent, with Facebook's messages")
    func appSecretProof() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken(app: Demo.proofAppID)
            let missing = try await Self.me(emulator, token).graphError()
            #expect(missing.code == 100 && missing.type == "GraphMethodException" && missing.subcode == nil)
            #expect(missing.message == "API calls from the server require an appsecret_proof argument")
            let wrong = try await Self.me(
                emulator, token, extra: [("appsecret_proof", String(repeating: "0", count: 64))]
            )
            .graphError()
            #expect(wrong.message == "Invalid appsecret_proof provided in the API argument")
            let proof = AppSecretProof.compute(accessToken: token, secret: Demo.proofSecret)
            let right = try await Self.me(emulator, token, extra: [("appsecret_proof", proof)])
            #expect(right.status == .ok)

            // The demo app does not require a proof, but a wrong one is still refused.
            let demo = try await emulator.mintToken()
            #expect(try await Self.me(emulator, demo, extra: [("appsecret_proof", proof)]).status == .badRequest)
        }
    }

    @Test("appsecret_proof is lowercase hex HMAC-SHA256 of the token")
    func proofVector() {
        #expect(
            AppSecretProof.compute(accessToken: "EAAtest", secret: Demo.secret)
                == "924d4e3522045afb9b3fab33360d1e4190a66f6ca0606f52ffab7055d64d6f93")
    }

    @Test("/me/permissions lists granted and declined; DELETE of one permission declines it")
    func permissions() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken(scopes: ["email", "user_gender"])
            let listed = try await emulator.get(EmulatorClient.path("/me/permissions", [("access_token", token)]))
            #expect(
                try listed.json()["data"] == [
                    ["permission": "email", "status": "granted"],
                    ["permission": "public_profile", "status": "granted"],
                    ["permission": "user_gender", "status": "granted"],
                ])
            let revoked = try await emulator.delete(
                EmulatorClient.path("/me/permissions/email", [("access_token", token)]))
            #expect(try revoked.json() == ["success": true])
            #expect(try await Self.me(emulator, token, fields: "email").json()["email"] == nil)
            let after = try await emulator.get(EmulatorClient.path("/me/permissions", [("access_token", token)]))
            #expect(
                try after.json()["data"]?.arrayValue?.contains(["permission": "email", "status": "declined"]) == true)
        }
    }

    @Test("DELETE /me/permissions removes the app: the token then fails with 190/458")
    func removeApp() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let other = try await emulator.mintToken()
            let response = try await emulator.get(
                EmulatorClient.path("/me/permissions", [("access_token", token), ("method", "delete")]))
            #expect(try response.json() == ["success": true])
            // A code issued before the removal no longer yields a working token.
            let code = try await TokenEndpointTests.code(emulator)
            _ = try await emulator.post(
                "/_emulator/tokens/revoke",
                json: ["app_id": .string(Demo.appID), "user": "alice", "reason": "app_removed"])
            let exchanged = try await TokenEndpointTests.exchange(emulator, code: code).graphError()
            #expect(exchanged.code == 190 && exchanged.subcode == 458)
            for used in [token, other] {
                let error = try await Self.me(emulator, used).graphError()
                #expect(error.code == 190 && error.subcode == 458)
            }
        }
    }

    @Test("an app token reads users of its app by id; a user token cannot read others")
    func readById() async throws {
        try await withEmulator { emulator in
            let bob = try await emulator.mintToken("bob", scopes: ["email"])
            let byApp = try await emulator.get(
                EmulatorClient.path(
                    "/\(Demo.id("bob"))", [("access_token", Demo.appToken), ("fields", "id,name,email")]))
            #expect(
                try byApp.json() == [
                    "id": .string(Demo.id("bob")), "name": "Bob Marley Smith", "email": "bob@example.com",
                ])
            _ = try await emulator.mintToken("alice")
            let other = try await emulator.get(EmulatorClient.path("/\(Demo.id("alice"))", [("access_token", bob)]))
            let error = try other.graphError()
            #expect(error.code == 100 && error.subcode == 33 && error.type == "GraphMethodException")
            let otherAppsID = try await emulator.get(
                EmulatorClient.path("/\(Demo.id("bob", app: Demo.proofAppID))", [("access_token", Demo.appToken)]))
            #expect(try otherAppsID.graphError().code == 100)
        }
    }

    @Test("/{id}/picture redirects to the picture; an app token may send an appsecret_proof too")
    func pictureEdge() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let response = try await emulator.get(
                EmulatorClient.path("/me/picture", [("access_token", token), ("type", "large")]))
            #expect(response.status == .found)
            #expect(response.headers[.location]?.contains("asid=\(Demo.id("alice"))&height=200&width=200") == true)
            let proof = AppSecretProof.compute(accessToken: Demo.appToken, secret: Demo.secret)
            let withProof = try await emulator.get(
                EmulatorClient.path(
                    "/\(Demo.id("alice"))", [("access_token", Demo.appToken), ("appsecret_proof", proof)]))
            #expect(withProof.status == .ok)
            let wrongProof = try await emulator.get(
                EmulatorClient.path(
                    "/\(Demo.id("alice"))", [("access_token", Demo.appToken), ("appsecret_proof", "00")]))
            #expect(try wrongProof.graphError().code == 100)
        }
    }

    @Test("/app names the token's app")
    func appEndpoint() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken()
            let response = try await emulator.get(EmulatorClient.path("/app", [("access_token", token)]))
            #expect(try response.json()["id"] == .string(Demo.appID))
        }
    }
}
