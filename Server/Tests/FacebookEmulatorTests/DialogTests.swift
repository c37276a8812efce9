import Foundation
import HTTPTypes
import LatchkeyCrypto
import Testing

@testable import FacebookEmulator

@Suite("OAuth dialog")
struct DialogTests {
    static func dialogPath(_ extra: [(String, String)] = [], redirect: String = Demo.redirect) -> String {
        EmulatorClient.path(
            "/v21.0/dialog/oauth",
            [("client_id", Demo.appID), ("redirect_uri", redirect), ("state", "s t&ate/1")] + extra)
    }

    @Test("renders a login page with users, permissions, Continue and Cancel")
    func rendersPage() async throws {
        try await withEmulator { emulator in
            let response = try await emulator.get(Self.dialogPath([("scope", "email,user_birthday")]))
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
            let page = response.text
            for expected in [
                "Alice Liddell", "Carol Nomail", "grant_email", "grant_user_birthday", "value=\"continue\"",
                "value=\"cancel\"", "name=\"state\" value=\"s t&amp;ate/1\"",
            ] {
                #expect(page.contains(expected), "page lacks \(expected)")
            }
            #expect(!page.contains("<script"))
        }
    }

    @Test("non-interactive approval redirects with code, state and returned scopes")
    func approveWithCode() async throws {
        try await withEmulator { emulator in
            let response = try await emulator.get(
                Self.dialogPath([
                    ("scope", "email,user_friends"), ("return_scopes", "true"), ("emulator_user", "alice"),
                    ("emulator_grant", "email"), ("sdk", "ios"), ("unknown_param", "ignored"),
                ]))
            #expect(response.status == .found)
            let (base, parameters, fragment) = try response.redirectParameters()
            #expect(base == Demo.redirect)
            #expect(!fragment)
            // Facebook appends an empty fragment to query answers (blog post 552, omniauth-facebook#71).
            #expect(response.headers[.location]?.hasSuffix("&state=s+t%26ate%2F1#_=_") == true)
            #expect(parameters["code"]?.hasPrefix("AQ") == true)
            #expect(parameters["state"] == "s t&ate/1")
            #expect(parameters["granted_scopes"] == "email,public_profile")
            #expect(parameters["denied_scopes"] == "user_friends")
        }
    }

    @Test("cancel redirects with Facebook's exact error parameters, and Facebook's #_=_ fragment")
    func cancel() async throws {
        try await withEmulator { emulator in
            let response = try await emulator.get(Self.dialogPath([("emulator_action", "cancel")]))
            #expect(response.status == .found)
            let location = try #require(response.headers[.location])
            #expect(
                location
                    == "\(Demo.redirect)?error=access_denied&error_code=200&error_description=Permissions+error&error_reason=user_denied&state=s+t%26ate%2F1#_=_"
            )
        }
    }

    @Test("the HTML form's Continue grants only the ticked permissions")
    func formSubmission() async throws {
        try await withEmulator { emulator in
            let response = try await emulator.post(
                "/dialog/oauth",
                form: [
                    ("client_id", Demo.appID), ("redirect_uri", Demo.redirect), ("scope", "email,user_gender"),
                    ("return_scopes", "true"), ("emulator_form", "1"), ("emulator_user", "bob"),
                    ("grant_user_gender", "on"), ("emulator_action", "continue"),
                ])
            let (_, parameters, _) = try response.redirectParameters()
            #expect(parameters["granted_scopes"] == "public_profile,user_gender")
            #expect(parameters["denied_scopes"] == "email")
        }
    }

    @Test("the HTML form's Cancel cancels; Continue without an account re-renders")
    func formCancelAndMissingUser() async throws {
        try await withEmulator { emulator in
            let base: [(String, String)] = [
                ("client_id", Demo.appID), ("redirect_uri", Demo.redirect), ("emulator_form", "1"),
            ]
            let cancelled = try await emulator.post("/dialog/oauth", form: base + [("emulator_action", "cancel")])
            #expect(try cancelled.redirectParameters().parameters["error"] == "access_denied")
            let missing = try await emulator.post("/dialog/oauth", form: base + [("emulator_action", "continue")])
            #expect(missing.status == .badRequest)
            #expect(missing.text.contains("Choose an account"))
        }
    }

    @Test("response_type=token answers in the fragment with an hour-aligned short-lived token")
    func implicitToken() async throws {
        try await withEmulator { emulator in
            let response = try await emulator.get(
                Self.dialogPath([("response_type", "token"), ("emulator_user", "alice")]))
            let (_, parameters, fragment) = try response.redirectParameters()
            #expect(fragment)
            let token = try #require(parameters["access_token"])
            let expiresIn = try #require(parameters["expires_in"].flatMap(Int.init))
            #expect((3600...7200).contains(expiresIn))
            #expect((Int(Demo.start.timeIntervalSince1970) + expiresIn) % 3600 == 0)
            #expect(parameters["data_access_expiration_time"] == String(1_800_000_000 + 7_776_000))
            #expect(try await emulator.debug(token)["is_valid"] == true)
        }
    }

    @Test("iOS-style response types put id_token, token, signed_request and graph_domain in the fragment")
    func iosResponseType() async throws {
        try await withEmulator { emulator in
            let response = try await emulator.get(
                Self.dialogPath(
                    [
                        ("response_type", "id_token,token_or_nonce,signed_request,graph_domain"),
                        ("scope", "openid,email"), ("nonce", "raw nonce/+="), ("emulator_user", "alice"),
                    ], redirect: "fb\(Demo.appID)://authorize"))
            let (base, parameters, fragment) = try response.redirectParameters()
            #expect(base == "fb\(Demo.appID)://authorize")
            #expect(fragment)
            #expect(parameters["access_token"] != nil)
            #expect(parameters["graph_domain"] == "facebook")
            let claims = try JWTParts(try #require(parameters["id_token"])).payload
            #expect(claims["nonce"] == "raw nonce/+=")
            #expect(claims["at_hash"] != nil)
            let signed = try #require(parameters["signed_request"])
            let segments = signed.split(separator: ".").map(String.init)
            #expect(SignedRequest.signature(encodedPayload: segments[1], secret: Demo.secret) == segments[0])
        }
    }

    @Test("declined permissions are not asked again unless auth_type=rerequest")
    func rerequest() async throws {
        try await withEmulator { emulator in
            let first = [("scope", "email"), ("return_scopes", "true"), ("emulator_user", "alice")]
            _ = try await emulator.get(Self.dialogPath(first + [("emulator_grant", "")]))
            let again = try await emulator.get(Self.dialogPath(first))
            #expect(try again.redirectParameters().parameters["denied_scopes"] == "email")
            let rerequested = try await emulator.get(Self.dialogPath(first + [("auth_type", "rerequest")]))
            let parameters = try rerequested.redirectParameters().parameters
            #expect(parameters["granted_scopes"] == "email,public_profile")
            #expect(parameters["denied_scopes"] == "")
        }
    }

    @Test("an unregistered or look-alike redirect URI gets an error page, never a redirect")
    func unregisteredRedirect() async throws {
        try await withEmulator { emulator in
            for redirect in [
                "https://evil.example/cb", "latchkeydemo://auth/../evil", "latchkeydemo://auth2", "fb999://authorize",
            ] {
                let response = try await emulator.get(Self.dialogPath(redirect: redirect))
                #expect(response.status == .badRequest)
                #expect(response.headers[.location] == nil)
                #expect(response.text.contains("URL Blocked"))
            }
        }
    }

    @Test("unknown app ids and invalid scopes get error pages")
    func invalidRequests() async throws {
        try await withEmulator { emulator in
            let unknownApp = try await emulator.get(
                EmulatorClient.path("/dialog/oauth", [("client_id", "42"), ("redirect_uri", Demo.redirect)]))
            #expect(unknownApp.status == .badRequest)
            #expect(unknownApp.text.contains("Invalid App ID"))
            let badScope = try await emulator.get(Self.dialogPath([("scope", "email,not_a_permission")]))
            #expect(badScope.text.contains("Invalid Scopes: not_a_permission"))
            let badPKCE = try await emulator.get(
                Self.dialogPath([
                    ("code_challenge", String(repeating: "a", count: 43)), ("code_challenge_method", "S512"),
                ]))
            #expect(badPKCE.text.contains("Unsupported code_challenge_method"))
        }
    }
}
