import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import NIOCore
import Testing

/// Easy Login over real HTTP: app → Latchkey → emulator dialog → Latchkey → app → token endpoint.
@Suite("Easy Login (OAuth 2.0 code flow with PKCE)")
struct EasyLoginTests {
    /// Runs the whole chain and returns the app's redirect (code or error).
    static func redirect(
        _ stack: Stack, _ request: AuthorizeRequest = AuthorizeRequest(), choose: String = "emulator_user=alice",
        beforeCallback: @Sendable () async throws -> Void = {}
    ) async throws -> [String: String] {
        let outcome = try await TestBrowser.signIn(
            request.url(stack), stack: stack, choose: choose, beforeCallback: beforeCallback)
        let location = try #require(outcome.location, "expected a redirect to the app, got \(outcome)")
        #expect(location.hasPrefix(request.redirectURI + "?"))
        return TestBrowser.query(location)
    }

    @Test("the whole chain: user created with the mapping, code redeemed once for a session that works")
    func happyPath() async throws {
        try await Stack.run(browsable: true) { stack in
            var request = AuthorizeRequest()
            request.extra = [("fields_mapping", "email=email,first_name=firstName")]
            // The first hop goes to Facebook with Latchkey's own state and PKCE, never the app's.
            let first = try await TestBrowser.get(request.url(stack))
            let dialog = TestBrowser.query(try #require(first.location))
            #expect(dialog["client_id"] == Demo.appID)
            #expect(dialog["redirect_uri"] == stack.serverURL.absoluteString + "/v1/oauth/facebook/callback")
            #expect(dialog["code_challenge_method"] == "S256")
            #expect(dialog["code_challenge"] != request.challenge)
            #expect(dialog["state"] != request.state)
            #expect(dialog["scope"] == "public_profile,email")

            _ = try await stack.emulatorDelete("/_emulator/calls")
            let answer = try await Self.redirect(stack, request)
            #expect(answer["state"] == request.state)
            #expect(answer["iss"] == stack.serverURL.absoluteString)
            let code = try #require(answer["code"])
            let calls = try await stack.emulatorGET("/_emulator/calls")["calls"]
            #expect(calls?["/oauth/access_token"]?.intValue == 1)
            #expect(calls?["/debug_token"]?.intValue == 1)
            #expect(calls?["/me"]?.intValue == 1)

            let issued = try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code))
            #expect(issued.status == .ok)
            #expect(issued.headers[.cacheControl] == "no-store")
            let session = try JSONDecoder().decode(SessionBody.self, from: Data(issued.body.readableBytesView))
            #expect(session.tokenType == "Bearer")
            #expect(session.scope == "email public_profile")
            let me = try await stack.get("/v1/users/me", bearer: session.accessToken).json()
            #expect(me["properties"]?["email"]?.stringValue == "alice@example.com")
            #expect(me["properties"]?["firstName"]?.stringValue == "Alice")
            #expect(me["properties"]?["name"] == nil)  // the request's mapping replaced the default

            // The refresh token is an ordinary one.
            let refreshed = try await stack.postForm(
                "/v1/oauth/token", [("grant_type", "refresh_token"), ("refresh_token", session.refreshToken)])
            #expect(refreshed.status == .ok)

            // A second Easy Login finds the same user.
            let again = try await Self.redirect(stack, request)
            let second = try JSONDecoder().decode(
                SessionBody.self,
                from: Data(
                    try await stack.postForm("/v1/oauth/token", request.tokenForm(code: try #require(again["code"])))
                        .body.readableBytesView))
            #expect(try await stack.get("/v1/users/me", bearer: second.accessToken).json()["id"] == me["id"])
        }
    }

    @Test("a replayed code is refused and revokes the session it opened")
    func replayedCode() async throws {
        try await Stack.run(browsable: true) { stack in
            let request = AuthorizeRequest()
            let code = try #require(try await Self.redirect(stack, request)["code"])
            let first = try JSONDecoder().decode(
                SessionBody.self,
                from: Data(
                    try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code)).body.readableBytesView))
            let replay = try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code))
            #expect(replay.status == .badRequest)
            #expect(try replay.json()["error"]?.stringValue == "invalid_grant")
            #expect(try replay.json()["error_code"]?.stringValue == "authorization_code_reused")
            #expect(try await stack.get("/v1/users/me", bearer: first.accessToken).errorCode == "session_revoked")
            let refresh = try await stack.postForm(
                "/v1/oauth/token", [("grant_type", "refresh_token"), ("refresh_token", first.refreshToken)])
            #expect(try refresh.json()["error"]?.stringValue == "invalid_grant")
        }
    }

    @Test("the code is bound to its verifier, redirect URI and client; a wrong try spends it")
    func codeBindings() async throws {
        try await Stack.run(browsable: true) { stack in
            let request = AuthorizeRequest()
            var wrongVerifier = request
            wrongVerifier.verifier = String(repeating: "w", count: 50)
            var wrongRedirect = request
            wrongRedirect.redirectURI = Demo.loopbackRedirect
            for wrong in [wrongVerifier, wrongRedirect] {
                let code = try #require(try await Self.redirect(stack, request)["code"])
                let refused = try await stack.postForm("/v1/oauth/token", wrong.tokenForm(code: code))
                #expect(refused.status == .badRequest)
                #expect(try refused.json()["error"]?.stringValue == "invalid_grant")
                #expect(try refused.json()["error_code"]?.stringValue == "authorization_code_invalid")
                // Spent: the right verifier no longer helps whoever holds the code.
                let late = try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code))
                #expect(try late.json()["error_code"]?.stringValue == "authorization_code_invalid")
            }
            var unknownClient = request
            unknownClient.clientID = "someone-else"
            let code = try #require(try await Self.redirect(stack, request)["code"])
            let unknown = try await stack.postForm("/v1/oauth/token", unknownClient.tokenForm(code: code))
            #expect(unknown.status == .unauthorized)
            #expect(try unknown.json()["error"]?.stringValue == "invalid_client")
            // A client may identify itself with Basic credentials and an empty password.
            var basic = HTTPFields()
            basic[.authorization] = "Basic " + Data("\(Demo.clientID):".utf8).base64EncodedString()
            basic[.contentType] = "application/x-www-form-urlencoded"
            let withSecret = try await stack.server.execute(
                uri: "/v1/oauth/token", method: .post,
                headers: [
                    .authorization: "Basic " + Data("\(Demo.clientID):secret".utf8).base64EncodedString(),
                    .contentType: "application/x-www-form-urlencoded",
                ],
                body: ByteBuffer(string: FormEncoding.encode(request.tokenForm(code: code))))
            #expect(try withSecret.json()["error"]?.stringValue == "invalid_client")
            var shortVerifier = request
            shortVerifier.verifier = "too-short"
            let malformed = try await stack.postForm("/v1/oauth/token", shortVerifier.tokenForm(code: code))
            #expect(try malformed.json()["error"]?.stringValue == "invalid_request")
            // No refusal touched the code: it still works, here with the client id in the header.
            let accepted = try await stack.server.execute(
                uri: "/v1/oauth/token", method: .post, headers: basic,
                body: ByteBuffer(
                    string: FormEncoding.encode(request.tokenForm(code: code).filter { $0.0 != "client_id" })))
            #expect(accepted.status == .ok)
        }
    }

    @Test("codes expire after a minute; requests after LATCHKEY_EASY_LOGIN_TTL come back as an error")
    func expiry() async throws {
        try await Stack.run(browsable: true) { stack in
            let request = AuthorizeRequest()
            let code = try #require(try await Self.redirect(stack, request)["code"])
            stack.clock.advance(61)
            let late = try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code))
            #expect(try late.json()["error_code"]?.stringValue == "authorization_code_invalid")

            let expired = try await Self.redirect(stack, request) { stack.clock.advance(601) }
            #expect(expired["error"] == "access_denied")
            #expect(expired["error_code"] == "login_request_expired")
            #expect(expired["state"] == request.state)
            #expect(expired["code"] == nil)
        }
    }

    @Test("cancel on Facebook reaches the app as access_denied with its state")
    func cancel() async throws {
        try await Stack.run(browsable: true) { stack in
            let answer = try await Self.redirect(stack, choose: "emulator_action=cancel")
            #expect(answer["error"] == "access_denied")
            #expect(answer["error_code"] == nil)
            #expect(answer["state"] == "client-state-123")
            #expect(answer["code"] == nil)
        }
    }

    @Test("the callback's state is single use; unknown states get a page, never a redirect")
    func callbackState() async throws {
        try await Stack.run(browsable: true) { stack in
            let first = try await TestBrowser.get(AuthorizeRequest().url(stack))
            let answered = try await TestBrowser.get(try #require(first.location) + "&emulator_user=bob")
            let callback = try #require(answered.location)
            #expect(try await TestBrowser.get(callback).location?.hasPrefix(Demo.appRedirect) == true)
            guard case .page(let status, let body) = try await TestBrowser.get(callback) else {
                Issue.record("a replayed callback must not redirect")
                return
            }
            #expect(status == 400)
            #expect(body.contains("already completed"))
            let base = stack.serverURL.absoluteString + "/v1/oauth/facebook/callback"
            for query in ["?code=AQ123&state=forged", "?code=AQ123", "?error=access_denied&state=forged"] {
                #expect(try await TestBrowser.get(base + query).location == nil, "\(query)")
            }
        }
    }

    @Test(
        "unregistered and look-alike redirect URIs get an error page, never a redirect",
        arguments: [
            "testapp://auth.evil", "testapp://auth/extra", "testapp://auth?x=1", "testapp://auth#fragment",
            "testapp://evil@auth", "otherapp://auth", "http://127.0.0.1.evil.example/callback",
            "http://localhost/callback", "https://127.0.0.1/callback", "http://127.0.0.1/callback/../evil",
            "http://[::1]/callback", "http://user@127.0.0.1/callback", "http://127.0.0.1/callbackx", "",
        ])
    func redirectURIs(redirect: String) async throws {
        try await Stack.run(browsable: true) { stack in
            var request = AuthorizeRequest()
            request.redirectURI = redirect
            guard case .page(let status, let body) = try await TestBrowser.get(request.url(stack)) else {
                Issue.record("\(redirect) was redirected to")
                return
            }
            #expect(status == 400)
            #expect(body.contains("not registered"))
        }
    }

    @Test("loopback redirect URIs match on any port (RFC 8252 §7.3)")
    func loopbackPort() async throws {
        try await Stack.run(browsable: true) { stack in
            var request = AuthorizeRequest()
            request.redirectURI = "http://127.0.0.1:51234/callback"
            let answer = try await Self.redirect(stack, request)
            let code = try #require(answer["code"])
            #expect(try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code)).status == .ok)
        }
    }

    @Test(
        "a bad request from a known client is redirected back as an OAuth error",
        arguments: [
            ([("code_challenge_method", "plain")], "invalid_request"),
            ([("response_type", "token")], "unsupported_response_type"),
            ([("scope", "email DROP-TABLE")], "invalid_scope"),
            ([("scope", "openid email")], "invalid_scope"),
            ([("fields_mapping", "email=isAdmin")], "invalid_request"),
            ([("fields_mapping", "not-a-mapping")], "invalid_request"),
            ([("state", "again")], "invalid_request"),
            ([("code_challenge", "short")], "invalid_request"),
        ])
    func redirectedErrors(changes: [(String, String)], error: String) async throws {
        try await Stack.run(browsable: true) { stack in
            let request = AuthorizeRequest()
            var url = request.url(stack)
            for (name, value) in changes {
                if name == "state" {
                    url += "&state=" + value  // a repeated parameter
                } else if url.contains("\(name)=") {
                    url = url.replacingOccurrences(
                        of: "\(name)=[^&]*", with: "\(name)=" + FormEncoding.escape(value), options: .regularExpression)
                } else {
                    url += "&\(name)=" + FormEncoding.escape(value)
                }
            }
            let location = try #require(try await TestBrowser.get(url).location)
            #expect(location.hasPrefix(Demo.appRedirect + "?"))
            let answer = TestBrowser.query(location)
            #expect(answer["error"] == error)
            #expect(answer["code"] == nil)
        }
    }

    @Test("missing PKCE is refused; unknown clients get a page")
    func missingPKCEAndUnknownClient() async throws {
        try await Stack.run(browsable: true) { stack in
            let base = stack.serverURL.absoluteString + "/v1/oauth/authorize?"
            let noPKCE = try await TestBrowser.get(
                base + "response_type=code&client_id=test-app&redirect_uri=testapp%3A%2F%2Fauth&state=s")
            #expect(TestBrowser.query(try #require(noPKCE.location))["error"] == "invalid_request")
            var unknown = AuthorizeRequest()
            unknown.clientID = "nobody"
            #expect(try await TestBrowser.get(unknown.url(stack)).location == nil)
        }
    }

    @Test("Facebook down during the code exchange: temporarily_unavailable back to the app")
    func facebookDown() async throws {
        try await Stack.run(browsable: true) { stack in
            let answer = try await Self.redirect(stack) {
                _ = try await stack.emulator(
                    "/_emulator/faults", ["endpoint": "/oauth/access_token", "preset": "server_error"])
            }
            #expect(answer["error"] == "temporarily_unavailable")
            #expect(answer["error_code"] == "facebook_unavailable")
            #expect(answer["state"] == "client-state-123")
        }
    }

    @Test("a disabled user gets access_denied with user_disabled, and no code")
    func disabledUser() async throws {
        try await Stack.run(browsable: true) { stack in
            let request = AuthorizeRequest()
            let code = try #require(try await Self.redirect(stack, request)["code"])
            let session = try JSONDecoder().decode(
                SessionBody.self,
                from: Data(
                    try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code)).body.readableBytesView))
            let userID = try #require(
                try await stack.get("/v1/users/me", bearer: session.accessToken).json()["id"]?.stringValue)
            try await stack.store.setUserDisabled(id: userID, disabled: true, now: stack.clock.now, by: .commandLine)
            let answer = try await Self.redirect(stack, request)
            #expect(answer["error"] == "access_denied")
            #expect(answer["error_code"] == "user_disabled")
        }
    }

    @Test("discovery advertises the authorization server (RFC 8414) in both documents")
    func discovery() async throws {
        try await Stack.run(browsable: true) { stack in
            for path in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
                let document = try await stack.get(path).json()
                let base = stack.serverURL.absoluteString
                #expect(document["issuer"]?.stringValue == base)
                #expect(document["authorization_endpoint"]?.stringValue == base + "/v1/oauth/authorize")
                #expect(document["token_endpoint"]?.stringValue == base + "/v1/oauth/token")
                #expect(document["code_challenge_methods_supported"] == ["S256"])
                #expect(document["grant_types_supported"] == ["authorization_code", "refresh_token"])
                #expect(document["authorization_response_iss_parameter_supported"] == true)
            }
        }
    }

    @Test("token endpoint errors take RFC 6749 §5.2's shape")
    func tokenErrors() async throws {
        try await Stack.run { stack in
            let cases: [([(String, String)], String, String)] = [
                ([], "invalid_request", "invalid_request"),
                ([("grant_type", "password")], "unsupported_grant_type", "unsupported_grant_type"),
                ([("grant_type", "authorization_code")], "invalid_request", "invalid_request"),
                (
                    [("grant_type", "refresh_token"), ("refresh_token", "nope")], "invalid_grant",
                    "refresh_token_invalid"
                ),
                ([("grant_type", "refresh_token"), ("surprise", "1")], "invalid_request", "invalid_request"),
                // RFC 6749 §3.2: unknown parameters are ignored, empty ones count as absent.
                (
                    [
                        ("grant_type", "refresh_token"), ("refresh_token", "nope"), ("resource", "x"),
                        ("client_secret", ""),
                    ],
                    "invalid_grant", "refresh_token_invalid"
                ),
                ([("grant_type", "refresh_token"), ("refresh_token", "")], "invalid_request", "invalid_request"),
            ]
            for (form, error, code) in cases {
                let response = try await stack.postForm("/v1/oauth/token", form)
                #expect(response.status == .badRequest, "\(form)")
                let body = try response.json()
                #expect(body["error"]?.stringValue == error, "\(form)")
                #expect(body["error_code"]?.stringValue == code, "\(form)")
                #expect(body["error_description"]?.stringValue?.isEmpty == false)
            }
            let json = try await stack.post("/v1/oauth/token", json: ["grant_type": "authorization_code", "code": 5])
            #expect(try json.json()["error"]?.stringValue == "invalid_request")
            #expect(json.headers[HTTPField.Name("Pragma")!] == "no-cache")
        }
    }
}
