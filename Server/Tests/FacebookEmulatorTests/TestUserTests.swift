import Foundation
import HummingbirdTesting
import Testing

@testable import FacebookEmulator

@Suite("Test-user API /{app-id}/accounts/test-users")
struct TestUserTests {
    static let path = "/v21.0/\(Demo.appID)/accounts/test-users"

    @Test("create an installed test user with permissions; its token works on /me")
    func createInstalled() async throws {
        try await withEmulator { emulator in
            let response = try await emulator.post(
                Self.path,
                form: [
                    ("installed", "true"), ("permissions", "email,user_birthday"), ("name", "Dorothy Test"),
                    ("access_token", Demo.appToken),
                ])
            #expect(response.status == .ok)
            let body = try response.json()
            let id = try #require(body["id"]?.stringValue)
            #expect(id.count == 16 && id.allSatisfy(\.isNumber))
            let email = try #require(body["email"]?.stringValue)
            #expect(email.hasPrefix("dorothy_test_") && email.hasSuffix("@tfbnw.net"))
            #expect(body["password"]?.stringValue?.count == 8)
            #expect(body["login_url"]?.stringValue?.contains("/dialog/oauth?") == true)
            let token = try #require(body["access_token"]?.stringValue)
            let me = try await emulator.get(
                EmulatorClient.path("/me", [("access_token", token), ("fields", "id,name,email")]))
            #expect(try me.json() == ["id": .string(id), "name": "Dorothy Test", "email": .string(email)])
            let scopes = try await emulator.debug(token)["scopes"]
            #expect(scopes == ["email", "public_profile", "user_birthday"])
        }
    }

    @Test("an uninstalled test user has a null access_token; the login_url logs them in")
    func createUninstalled() async throws {
        try await withEmulator { emulator in
            let body = try await emulator.post(
                Self.path, form: [("installed", "false"), ("access_token", Demo.appToken)]
            ).json()
            #expect(body["access_token"] == .null)
            let loginURL = try #require(body["login_url"]?.stringValue)
            let start = try #require(loginURL.range(of: "/dialog/oauth")?.lowerBound)
            let path = String(loginURL[start...])
            let login = try await emulator.get(path)
            #expect(login.status == .found)
            #expect(try login.redirectParameters().parameters["code"] != nil)
        }
    }

    @Test("list pages with limit and after cursors, tokens only for installed users")
    func list() async throws {
        try await withEmulator { emulator in
            _ = try await emulator.mintToken("alice")
            let first = try await emulator.get(
                EmulatorClient.path(Self.path, [("limit", "3"), ("access_token", Demo.appToken)])
            ).json()
            let page = try #require(first["data"]?.arrayValue)
            #expect(page.count == 3)
            #expect(page[0]["id"] == .string(Demo.id("alice")) && page[0]["access_token"] != nil)
            #expect(page[1]["access_token"] == nil)
            let after = try #require(first["paging"]?["cursors"]?["after"]?.stringValue)
            #expect(first["paging"]?["next"] != nil)
            let second = try await emulator.get(
                EmulatorClient.path(Self.path, [("limit", "3"), ("after", after), ("access_token", Demo.appToken)])
            ).json()
            #expect(second["data"]?.arrayValue?.count == 1)
            #expect(second["paging"]?["next"] == nil)
        }
    }

    @Test("delete removes the user and kills their tokens; the API needs the app's own token")
    func deleteAndAuthorization() async throws {
        try await withEmulator { emulator in
            let body = try await emulator.post(Self.path, form: [("access_token", Demo.appToken)]).json()
            let id = try #require(body["id"]?.stringValue)
            let token = try #require(body["access_token"]?.stringValue)
            let userToken = try await emulator.mintToken()
            let refused = try await emulator.get(EmulatorClient.path(Self.path, [("access_token", userToken)]))
            #expect(try refused.graphError().code == 100)
            let otherApp = try await emulator.get(
                EmulatorClient.path(Self.path, [("access_token", "\(Demo.proofAppID)|\(Demo.proofSecret)")]))
            #expect(try otherApp.graphError().code == 100)

            // Koala deletes with POST and method=delete.
            let deleted = try await emulator.post(
                "/\(id)", form: [("method", "delete"), ("access_token", Demo.appToken)])
            #expect(try deleted.json() == ["success": true])
            #expect(try await emulator.debug(token)["is_valid"] == false)
            let again = try await emulator.delete(EmulatorClient.path("/\(id)", [("access_token", Demo.appToken)]))
            #expect(try again.graphError().code == 100)
        }
    }

    @Test("a test user belongs to its app: other apps neither list, log in, nor change them")
    func ownership() async throws {
        try await withEmulator { emulator in
            _ = try await emulator.post(Self.path, form: [("name", "Only Demo"), ("access_token", Demo.appToken)])
            let users = try await emulator.get("/_emulator").json()["users"]?.arrayValue
            let key = try #require(users?.last?["key"]?.stringValue)
            let otherApp = "\(Demo.proofAppID)|\(Demo.proofSecret)"
            let otherList = try await emulator.get(
                EmulatorClient.path("/\(Demo.proofAppID)/accounts/test-users", [("access_token", otherApp)])
            ).json()
            #expect(otherList["data"]?.arrayValue?.count == 4)
            let dialog = [("client_id", Demo.proofAppID), ("redirect_uri", "fb\(Demo.proofAppID)://authorize")]
            let page = try await emulator.get(EmulatorClient.path("/dialog/oauth", dialog))
            #expect(page.text.contains("Alice Liddell") && !page.text.contains("Only Demo"))
            let login = try await emulator.get(EmulatorClient.path("/dialog/oauth", dialog + [("emulator_user", key)]))
            #expect(login.status == .badRequest)
            let rename = try await emulator.post(
                "/\(Demo.id(key, app: Demo.proofAppID))", form: [("name", "Hijacked"), ("access_token", otherApp)])
            #expect(try rename.graphError().code == 100)
        }
    }

    @Test("listing returns the same token each time rather than minting new ones")
    func stableListingTokens() async throws {
        try await withEmulator { emulator in
            _ = try await emulator.mintToken("alice")
            let path = EmulatorClient.path(Self.path, [("access_token", Demo.appToken)])
            let first = try await emulator.get(path).json()["data"]?.arrayValue?.first?["access_token"]
            let second = try await emulator.get(path).json()["data"]?.arrayValue?.first?["access_token"]
            #expect(first != nil && first == second)
        }
    }

    @Test("changing a test user's password invalidates their tokens with 190/460")
    func passwordChange() async throws {
        try await withEmulator { emulator in
            let token = try await emulator.mintToken("bob")
            let changed = try await emulator.post(
                "/\(Demo.id("bob"))", form: [("password", "new-password"), ("access_token", Demo.appToken)])
            #expect(try changed.json() == ["success": true])
            #expect(try await emulator.debug(token)["error"]?["subcode"] == 460)
        }
    }

    @Test("two test users can be made friends")
    func friends() async throws {
        try await withEmulator { emulator in
            let one = try await emulator.post(
                Self.path, form: [("permissions", "user_friends"), ("access_token", Demo.appToken)]
            ).json()
            let two = try await emulator.post(
                Self.path, form: [("permissions", "user_friends"), ("access_token", Demo.appToken)]
            ).json()
            let oneID = try #require(one["id"]?.stringValue)
            let twoID = try #require(two["id"]?.stringValue)
            let made = try await emulator.post("/\(oneID)/friends/\(twoID)", form: [("access_token", Demo.appToken)])
            #expect(try made.json() == ["success": true])
            let token = try #require(one["access_token"]?.stringValue)
            let otherToken = try #require(two["access_token"]?.stringValue)
            let onBehalfOfOther = try await emulator.post(
                "/\(oneID)/friends/\(twoID)", form: [("access_token", otherToken)])
            #expect(try onBehalfOfOther.graphError().code == 100)
            let withSelf = try await emulator.post("/\(oneID)/friends/\(oneID)", form: [("access_token", token)])
            #expect(try withSelf.graphError().code == 100)
            let friends = try await emulator.get(
                EmulatorClient.path("/me", [("fields", "friends"), ("access_token", token)])
            ).json()
            #expect(friends["friends"]?["data"]?.arrayValue?.first?["id"] == .string(twoID))
        }
    }
}
