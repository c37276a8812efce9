import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import NIOCore
import Testing

@testable import LatchkeyServer

/// Easy Login's request travels sealed in the `state` sent to Facebook: nothing is stored before
/// the person comes back, so no number of strangers can fill anything others need, and
/// only the state's single use is recorded, in the database every node shares.
@Suite("Easy Login: the request sealed in Facebook's state")
struct EasyLoginStateTests {
    /// `GET /v1/oauth/authorize` as a trusted proxy forwards it for `address`.
    static func authorize(_ stack: Stack, from address: String) async throws -> [String: String] {
        let response = try await stack.server.execute(
            uri: AuthorizeRequest().url(base: ""), method: .get,
            headers: [HTTPField.Name("X-Forwarded-For")!: address])
        let location = try #require(response.headers[.location], "\(response.status)")
        return TestBrowser.query(location).merging(["_to": location]) { given, _ in given }
    }

    @Test("the issue's probe: many addresses each using their authorize allowance cannot lock out a fresh one")
    func manyAddresses() async throws {
        let probed: @Sendable (inout ServerConfiguration) -> Void = {
            $0.http.trustedProxies = ["127.0.0.1/32", "::1"]
            $0.limits.authorizePerAddress = RateRule(name: "authorize-address", limit: 3, period: 600)
            // The old cap, set low: it was filled by strangers for everyone.
            $0.easyLogin.maximumPending = 20
        }
        try await Stack.run(browsable: true, probed) { (stack: Stack) async throws in
            // 40 IPv4 addresses and 40 IPv6 /64s, three sign-ins started from each, never finished.
            let addresses = (0..<40).map { "198.51.100.\($0 + 1)" } + (0..<40).map { "2001:db8:\($0 + 1)::1" }
            for address in addresses {
                for _ in 0..<3 {
                    let started = try await Self.authorize(stack, from: address)
                    #expect(started["_to"]?.hasPrefix(stack.emulatorURL + "/dialog/oauth") == true, "\(started)")
                }
                // Each address still meets its own limit.
                let refused = try await Self.authorize(stack, from: address)
                #expect(refused["error"] == "temporarily_unavailable" && refused["error_code"] == "rate_limited")
            }
            // A fresh address (the browser's own, 127.0.0.1, with no forwarded header) signs in.
            let answer = try await EasyLoginTests.redirect(stack)
            #expect(answer["code"] != nil, "\(answer)")
        }
    }

    @Test("a deprecated LATCHKEY_EASY_LOGIN_MAX_PENDING still parses, and the server says it is no longer used")
    func deprecatedSetting() async throws {
        let configuration = try ServerConfiguration(settings: ["LATCHKEY_EASY_LOGIN_MAX_PENDING": "10000"])
        #expect(configuration.easyLogin.maximumPending == 10_000)
        try await Stack.run({ $0.easyLogin.maximumPending = 10_000 }) { (stack: Stack) async throws in
            #expect(stack.logs.all.contains { $0.contains("latchkey.settings.deprecated") })
        }
        try await Stack.run { stack in
            #expect(!stack.logs.all.contains { $0.contains("latchkey.settings.deprecated") })
        }
    }

    /// The callback URL Facebook sends the browser back to after `request`'s dialog.
    static func callback(_ stack: Stack, _ request: AuthorizeRequest = AuthorizeRequest()) async throws -> String {
        let first = try await TestBrowser.get(request.url(stack))
        let answered = try await TestBrowser.get(try #require(first.location) + "&emulator_user=bob")
        return try #require(answered.location)
    }

    /// `url` with its `state` parameter replaced by `transform(state)`.
    static func replacingState(_ url: String, _ transform: (String) -> String) throws -> String {
        var components = try #require(URLComponents(string: url))
        let state = try #require(TestBrowser.query(url)["state"])
        let others = (components.percentEncodedQueryItems ?? []).filter { $0.name != "state" }
        components.percentEncodedQueryItems = others + [URLQueryItem(name: "state", value: transform(state))]
        return try #require(components.string)
    }

    static func expectRefusedPage(_ outcome: TestBrowser.Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .page(let status, let body) = outcome else {
            Issue.record("expected a page, never a redirect: \(outcome)", sourceLocation: sourceLocation)
            return
        }
        #expect(status == 400 && body.contains("already completed"), sourceLocation: sourceLocation)
    }

    @Test("a replayed callback, however its state is spelled, is refused and changes nothing")
    func replay() async throws {
        try await Stack.run(browsable: true) { stack in
            let request = AuthorizeRequest()
            let callback = try await Self.callback(stack, request)
            let answer = TestBrowser.query(try #require(try await TestBrowser.get(callback).location))
            let code = try #require(answer["code"])
            try await stack.emulatorDelete("/_emulator/calls")
            Self.expectRefusedPage(try await TestBrowser.get(callback))
            // The same bytes with base64url padding: one use, whatever the spelling.
            Self.expectRefusedPage(try await TestBrowser.get(try Self.replacingState(callback) { $0 + "%3D" }))
            // Facebook was not asked again, and the first answer's code still works.
            let calls = try await stack.emulatorGET("/_emulator/calls")["calls"]
            #expect((calls?["/oauth/access_token"]?.intValue ?? 0) == 0, "\(String(describing: calls))")
            let issued = try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code))
            #expect(issued.status == .ok)
        }
    }

    @Test("an altered state is refused with the unknown-sign-in page; an expired one reaches the app as expired")
    func alteredAndExpired() async throws {
        try await Stack.run(browsable: true) { stack in
            let callback = try await Self.callback(stack)
            // One character changed in each part: version, key id, nonce, ciphertext, tag.
            let state = try #require(TestBrowser.query(callback)["state"])
            for position in [0, 3, 16, 40, state.count - 2] {
                let altered = try Self.replacingState(callback) { text in
                    var characters = Array(text)
                    characters[position] = characters[position] == "A" ? "B" : "A"
                    return String(characters)
                }
                Self.expectRefusedPage(try await TestBrowser.get(altered))
            }
            for garbage in ["x", String(repeating: "A", count: 200), String(repeating: "A", count: 9000), "%00%FF"] {
                let outcome = try await TestBrowser.get(try Self.replacingState(callback) { _ in garbage })
                #expect(outcome.location == nil, "\(garbage.prefix(20))")
                if case .page(let status, _) = outcome { #expect(status == 400) }
            }
            // The original, never used, still completes: refusals record nothing.
            #expect(TestBrowser.query(try #require(try await TestBrowser.get(callback).location))["code"] != nil)

            let request = AuthorizeRequest()
            let late = try await Self.callback(stack, request)
            stack.clock.advance(601)
            for _ in 0..<2 {
                let expired = TestBrowser.query(try #require(try await TestBrowser.get(late).location))
                #expect(expired["error_code"] == "login_request_expired" && expired["state"] == request.state)
            }
        }
    }

    @Test(
        "a state sealed under this deployment's key still must name a registered client, redirect URI and app, and a lifetime authorize gives"
    )
    func forgedRequests() async throws {
        try await Stack.run(browsable: true) { stack in
            // Whoever holds a signing key (an old backup's) can seal a request of their own choosing.
            let row = try #require(try await stack.store.signingKeys().first)
            let key = try SessionSigningKey(
                rawPrivateKey: try SigningKeyProtection(stack.configuration).open(row.privateKey, kid: row.kid),
                createdAt: row.createdAt, retiredAt: nil)
            let now = stack.clock.now
            let honest = AuthorizationRequest(
                clientID: Demo.clientID, redirectURI: Demo.appRedirect, clientState: "s",
                codeChallenge: AuthorizeRequest().challenge, fieldsMapping: nil, facebookAppID: Demo.appID,
                facebookCodeVerifier: String(repeating: "v", count: 43), expiresAt: now.addingTimeInterval(600))
            func callback(_ request: AuthorizationRequest) throws -> String {
                stack.serverURL.absoluteString + "/v1/oauth/facebook/callback?"
                    + FormEncoding.encode([("state", try SealedRequest.seal(request, key: key)), ("code", "fb-code")])
            }
            var attacker = honest
            attacker.redirectURI = "https://attacker.example/callback"
            var unknownClient = honest
            unknownClient.clientID = "nobody"
            var forever = honest
            forever.expiresAt = now.addingTimeInterval(10 * 365 * 86_400)
            var otherApp = honest
            otherApp.facebookAppID = "999999999"
            for forged in [attacker, unknownClient, forever, otherApp] {
                Self.expectRefusedPage(try await TestBrowser.get(try callback(forged)))
            }
            // The same key's honest request gets past the checks (to Facebook, which refuses the code).
            let answer = try #require(try await TestBrowser.get(try callback(honest)).location)
            #expect(answer.hasPrefix(Demo.appRedirect))
        }
    }

    @Test("callbacks are counted per address before the state is opened: beyond the limit, a 429 page")
    func callbackLimit() async throws {
        try await Stack.run(
            browsable: true,
            { $0.limits.callbackPerAddress = RateRule(name: "callback-address", limit: 2, period: 60) }
        ) { stack in
            let callback = try await Self.callback(stack)
            let garbage = try Self.replacingState(callback) { _ in String(repeating: "A", count: 43) }
            for _ in 0..<2 { Self.expectRefusedPage(try await TestBrowser.get(garbage)) }
            // The third, even an honest one, waits: nothing was opened or written for it.
            guard case .page(let status, let body) = try await TestBrowser.get(callback) else {
                Issue.record("expected the 429 page")
                return
            }
            #expect(status == 429 && body.contains("Too many sign-ins"))
            stack.clock.advance(61)
            #expect(TestBrowser.query(try #require(try await TestBrowser.get(callback).location))["code"] != nil)
        }
    }

    @Test("the longest request authorize accepts fits Facebook's state and completes")
    func longestRequest() async throws {
        try await Stack.run(browsable: true, { $0.users.clientMappableProperties = nil }) {
            (stack: Stack) async throws in
            var request = AuthorizeRequest()
            // 512 bytes of client state that each take three characters in a URL.
            request.state = String(repeating: "é\"", count: 512 / 3) + "xx"
            let fields = [
                "id", "name", "first_name", "middle_name", "last_name", "email", "picture", "birthday", "gender",
                "link", "location", "hometown", "age_range", "friends",
            ]
            // Every mappable field, each onto a 64-character property.
            request.extra = [
                (
                    "fields_mapping",
                    fields.map { "\($0)=p_\($0)" + String(repeating: "x", count: 62 - $0.count) }.joined(separator: ",")
                )
            ]
            let dialog = try #require(try await TestBrowser.get(request.url(stack)).location)
            let state = try #require(TestBrowser.query(dialog)["state"])
            // Measured at 2,283 characters; the bound leaves room, it is not a promise.
            #expect(state.count <= 2500, "\(state.count)")
            // Sealed, not signed: nothing of the request shows.
            let sealed = Base64URL.decode(state) ?? Data()
            for secret in ["p_email", "testapp", "client-state", String(request.state.prefix(8))] {
                #expect(sealed.range(of: Data(secret.utf8)) == nil, "\(secret)")
            }
            // Permissions are not in the state (Facebook's answer says what was granted): 50 of the
            // longest names change the dialog's URL, not the state's length.
            var permissions = request
            permissions.scope = (0..<50).map { "permission_\($0)_" + String(repeating: "p", count: 48) }
                .joined(separator: " ")
            let long = try #require(try await TestBrowser.get(permissions.url(stack)).location)
            #expect(TestBrowser.query(long)["state"]?.count == state.count)
            let answered = try await TestBrowser.get(dialog + "&emulator_user=alice")
            let callback = try #require(answered.location)
            let back = TestBrowser.query(try #require(try await TestBrowser.get(callback).location))
            #expect(back["code"] != nil && back["state"] == request.state, "\(back)")
        }
    }

    @Test("a request an older release parked in the database still completes, once (a rolling upgrade)")
    func parkedByOlderRelease() async throws {
        try await Stack.run(browsable: true) { (stack: Stack) async throws in
            let request = AuthorizeRequest()
            // What an older node did at authorize: a 43-character handle, the request stored under its hash.
            let handle = RandomToken.base64URL(bytes: 32)
            let verifier = RandomToken.base64URL(bytes: 32)
            let parked = PendingAuthorization(
                handleHash: Data(SHA256.hash(data: Data(handle.utf8))), clientID: request.clientID,
                redirectURI: request.redirectURI, clientState: request.state, codeChallenge: request.challenge,
                permissions: ["public_profile"], fieldsMapping: nil, facebookAppID: Demo.appID,
                facebookCodeVerifier: verifier, expiresAt: stack.clock.now.addingTimeInterval(600))
            #expect(try await stack.store.savePendingAuthorization(parked, now: stack.clock.now, limit: 10))
            let dialog =
                stack.emulatorURL + "/dialog/oauth?"
                + FormEncoding.encode([
                    ("client_id", Demo.appID),
                    ("redirect_uri", stack.serverURL.absoluteString + "/v1/oauth/facebook/callback"),
                    ("state", handle), ("response_type", "code"), ("scope", "public_profile"),
                    ("code_challenge", PKCE.challenge(for: verifier)), ("code_challenge_method", "S256"),
                    ("emulator_user", "alice"),
                ])
            let callback = try #require(try await TestBrowser.get(dialog).location)
            let answer = TestBrowser.query(try #require(try await TestBrowser.get(callback).location))
            #expect(answer["code"] != nil && answer["state"] == request.state, "\(answer)")
            Self.expectRefusedPage(try await TestBrowser.get(callback))
        }
    }

    @Test("a state sealed by one node opens on another sharing the database, and is spent for both")
    func twoNodes() async throws {
        try await Stack.run { (first: Stack) async throws in
            // The second node talks to the first one's Facebook, with its key-encryption key.
            let sharing: @Sendable (inout ServerConfiguration) -> Void = {
                $0.facebook.graphURL = first.configuration.facebook.graphURL
                $0.facebook.jwksURL = first.configuration.facebook.jwksURL
                $0.facebook.dialogURL = first.configuration.facebook.dialogURL
                $0.secrets.keyEncryptionKey = first.configuration.secrets.keyEncryptionKey
            }
            try await Stack.run(clock: first.clock, store: first.store, sharing) { (second: Stack) async throws in
                let request = AuthorizeRequest()
                let started = try await first.server.execute(uri: request.url(base: ""), method: .get, headers: [:])
                let dialog = try #require(started.headers[.location])
                let back = try #require(try await TestBrowser.get(dialog + "&emulator_user=alice").location)
                let path = try #require(back.range(of: "/v1/oauth/facebook/callback"))
                let uri = String(back[path.lowerBound...])
                let answered = try await second.server.execute(uri: uri, method: .get, headers: [:])
                let answer = TestBrowser.query(try #require(answered.headers[.location]))
                let code = try #require(answer["code"], "\(answer)")
                for node in [first, second] {
                    let replayed = try await node.server.execute(uri: uri, method: .get, headers: [:])
                    #expect(replayed.status == .badRequest && replayed.headers[.location] == nil)
                }
                #expect(try await first.postForm("/v1/oauth/token", request.tokenForm(code: code)).status == .ok)
            }
        }
    }
}
