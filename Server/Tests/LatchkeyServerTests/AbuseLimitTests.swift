import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import NIOCore
import Testing

@testable import LatchkeyServer

@Suite("Abuse limits: the limiter and client addresses")
struct RateLimiterTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("GCRA: a burst of `limit`, then one every period/limit, with the exact wait")
    func gcra() async {
        let limiter = InProcessRateLimiter()
        let rule = RateRule(name: "r", limit: 3, period: 60)
        for _ in 0..<3 { #expect(await limiter.acquire("a", rule: rule, now: Self.start) == nil) }
        #expect(await limiter.acquire("a", rule: rule, now: Self.start) == 20)
        #expect(await limiter.acquire("b", rule: rule, now: Self.start) == nil)  // another key
        #expect(await limiter.acquire("a", rule: rule, now: Self.start.addingTimeInterval(19)) == 1)
        #expect(await limiter.acquire("a", rule: rule, now: Self.start.addingTimeInterval(20)) == nil)
        #expect(await limiter.acquire("a", rule: rule, now: Self.start.addingTimeInterval(20)) != nil)
        // Another rule never shares the count.
        #expect(await limiter.acquire("a", rule: RateRule(name: "s", limit: 1, period: 60), now: Self.start) == nil)
    }

    @Test("the table of keys is bounded: buckets full again are forgotten first")
    func bounded() async {
        let limiter = InProcessRateLimiter(maximumKeys: 10)
        let rule = RateRule(name: "r", limit: 5, period: 10)
        for index in 0..<10 { _ = await limiter.acquire("k\(index)", rule: rule, now: Self.start) }
        #expect(limiter.count == 10)
        _ = await limiter.acquire("new", rule: rule, now: Self.start.addingTimeInterval(30))
        #expect(limiter.count == 1)
        for index in 0..<20 {
            _ = await limiter.acquire("x\(index)", rule: rule, now: Self.start.addingTimeInterval(30))
        }
        #expect(limiter.count <= 10)
    }

    @Test("rules parse from N/SECONDS or off")
    func parsing() throws {
        #expect(try RateRule.parse("5/10", name: "n", setting: "S") == RateRule(name: "n", limit: 5, period: 10))
        #expect(try RateRule.parse("off", name: "n", setting: "S") == nil)
        for bad in ["5", "x/10", "5/0", "-1/10", "5/100000"] {
            #expect(throws: ConfigurationError.self) { _ = try RateRule.parse(bad, name: "n", setting: "S") }
        }
        let configuration = try ServerConfiguration(settings: [
            "LATCHKEY_LIMIT_SIGN_IN_PER_ADDRESS": "off", "LATCHKEY_LIMIT_NONCE_PER_ADDRESS": "7/70",
            "LATCHKEY_TRUSTED_PROXIES": "10.0.0.0/8, fd00::/8",
        ])
        #expect(configuration.limits.signInPerAddress == nil)
        #expect(configuration.limits.noncePerAddress == RateRule(name: "nonce-address", limit: 7, period: 70))
        #expect(configuration.limits.tokenPerAddress == AbuseLimitRules().tokenPerAddress)
        #expect(configuration.http.trustedProxies == ["10.0.0.0/8", "fd00::/8"])
    }

    @Test("addresses: IPv4 as is, IPv6 grouped by /64, IPv4-mapped as IPv4, ports and brackets stripped")
    func addresses() {
        #expect(ClientAddress("192.0.2.7")?.key == "v4:192.0.2.7")
        #expect(ClientAddress("192.0.2.7:4711")?.key == "v4:192.0.2.7")
        #expect(ClientAddress("::ffff:192.0.2.7")?.key == "v4:192.0.2.7")
        let first = ClientAddress("2001:db8:1:2:aaaa::1")?.key
        #expect(first == ClientAddress("[2001:db8:1:2:ffff:1:2:3]:443")?.key)
        #expect(first != ClientAddress("2001:db8:1:3::1")?.key)
        #expect(ClientAddress("not-an-address") == nil)
        // The /48 aggregates 65,536 /64s; IPv4 has none.
        #expect(ClientAddress("2001:db8:1:2::1")?.networkKey == "v6:20:1:d:b8:0:1::/48")
        #expect(ClientAddress("2001:db8:1:ffff::1")?.networkKey == ClientAddress("2001:db8:1:2::1")?.networkKey)
        #expect(ClientAddress("2001:db8:2::1")?.networkKey != ClientAddress("2001:db8:1::1")?.networkKey)
        #expect(ClientAddress("192.0.2.7")?.networkKey == nil)
        #expect(ClientAddress.Network("10.0.0.0/8")?.contains(ClientAddress("10.200.1.1")!) == true)
        #expect(ClientAddress.Network("10.0.0.0/8")?.contains(ClientAddress("11.0.0.1")!) == false)
        #expect(ClientAddress.Network("fd00::/8")?.contains(ClientAddress("fd12::1")!) == true)
        #expect(ClientAddress.Network("10.0.0.0/33") == nil)
    }

    @Test("forwarded headers count only from a trusted proxy, read from the right")
    func forwarded() {
        let proxies = ["10.0.0.0/8"].compactMap(ClientAddress.Network.init)
        func client(_ peer: String, _ headers: HTTPFields, trusted: [ClientAddress.Network] = proxies) -> String? {
            ClientAddress.of(peer: peer, headers: headers, trusted: trusted)?.key
        }
        let spoofed: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: "1.1.1.1, 192.0.2.9, 10.0.0.5"]
        // From a stranger, the headers are ignored.
        #expect(client("198.51.100.1", spoofed) == "v4:198.51.100.1")
        #expect(client("10.0.0.1", spoofed, trusted: []) == "v4:10.0.0.1")
        // From our proxy: the last hop that is not a proxy (the client could have sent 1.1.1.1).
        #expect(client("10.0.0.1", spoofed) == "v4:192.0.2.9")
        let forwarded: HTTPFields = [
            HTTPField.Name("Forwarded")!: #"for=192.0.2.60;proto=https, for="[2001:db8:cafe::17]:4711""#
        ]
        #expect(
            ClientAddress.of(peer: "10.1.1.1", headers: forwarded, trusted: proxies, header: .forwarded)?.key
                == ClientAddress("2001:db8:cafe::1")?.key)
        #expect(client("10.1.1.1", [HTTPField.Name("X-Forwarded-For")!: "garbage, 10.0.0.9"]) == "v4:10.1.1.1")
        // Only the configured header counts: a client's own `Forwarded` passes through a proxy that
        // appends to X-Forwarded-For, and must not choose the key.
        var both = spoofed
        both[HTTPField.Name("Forwarded")!] = "for=203.0.113.99"
        #expect(client("10.0.0.1", both) == "v4:192.0.2.9")
        #expect(
            ClientAddress.of(peer: "10.0.0.1", headers: both, trusted: proxies, header: .forwarded)?.key
                == "v4:203.0.113.99")
        #expect(ClientAddress.Network("/") == nil && ClientAddress.Network("") == nil)
    }
}

@Suite("Abuse limits on the running server")
struct AbuseLimitServerTests {
    static func limits(_ change: (inout AbuseLimitRules) -> Void) -> @Sendable (inout ServerConfiguration) -> Void {
        var rules = AbuseLimitRules.off
        change(&rules)
        let configured = rules
        return { $0.limits = configured }
    }

    @Test("sign-ins per address: 429 rate_limited with Retry-After, before any Facebook call")
    func signInPerAddress() async throws {
        try await Stack.run(Self.limits { $0.signInPerAddress = RateRule(name: "a", limit: 2, period: 60) }) { stack in
            for _ in 0..<2 {
                #expect(try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).status == .ok)
            }
            try await stack.emulatorDelete("/_emulator/calls")
            let refused = try await stack.signIn(["accessToken": "EAAmadeup"])
            #expect(refused.status == .tooManyRequests && refused.errorCode == "rate_limited")
            #expect(refused.headers[.retryAfter] == "30")
            #expect(try await stack.emulatorGET("/_emulator/calls")["calls"] == [:])
            stack.clock.advance(30)
            #expect(try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).status == .ok)
        }
    }

    @Test("sign-ins per Facebook identity, on every path")
    func signInPerIdentity() async throws {
        try await Stack.run(
            browsable: true, Self.limits { $0.signInPerIdentity = RateRule(name: "i", limit: 2, period: 60) }
        ) {
            stack in
            for _ in 0..<2 {
                #expect(try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).status == .ok)
            }
            let classic = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            #expect(classic.status == .tooManyRequests && classic.errorCode == "rate_limited")
            let limited = try await stack.signIn([
                "idToken": .string(try await stack.idToken()), "nonce": "raw-nonce-123",
            ])
            #expect(limited.errorCode == "rate_limited")
            let easy = try await EasyLoginTests.redirect(stack)
            #expect(easy["error"] == "temporarily_unavailable" && easy["error_code"] == "rate_limited")
            // Another person is not affected.
            #expect(
                try await stack.signIn(["accessToken": .string(try await stack.facebookToken("bob"))]).status == .ok)
        }
    }

    @Test("a replayed id token does not use up its owner's sign-ins")
    func replayRefunds() async throws {
        try await Stack.run(Self.limits { $0.signInPerIdentity = RateRule(name: "i", limit: 2, period: 60) }) {
            (stack: Stack) async throws in
            let token = try await stack.idToken()
            let body: JSONValue = ["idToken": .string(token), "nonce": "raw-nonce-123"]
            #expect(try await stack.signIn(body).status == .ok)
            for _ in 0..<5 { #expect(try await stack.signIn(body).errorCode == "id_token_replayed") }
            let second = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            #expect(second.status == .ok)
            let third = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            #expect(third.errorCode == "rate_limited")
        }
    }

    @Test("nonces and the token endpoint per address; the token endpoint answers in OAuth's shape")
    func nonceAndToken() async throws {
        try await Stack.run(
            Self.limits {
                $0.noncePerAddress = RateRule(name: "n", limit: 1, period: 60)
                $0.tokenPerAddress = RateRule(name: "t", limit: 1, period: 60)
            }
        ) { stack in
            #expect(try await stack.post("/v1/auth/nonce", json: [:]).status == .ok)
            let nonce = try await stack.post("/v1/auth/nonce", json: [:])
            #expect(nonce.status == .tooManyRequests && nonce.errorCode == "rate_limited")
            _ = try await stack.postForm("/v1/oauth/token", [("grant_type", "refresh_token"), ("refresh_token", "x")])
            let token = try await stack.postForm(
                "/v1/oauth/token", [("grant_type", "refresh_token"), ("refresh_token", "x")])
            #expect(token.status == .tooManyRequests && token.headers[.retryAfter] == "60")
            #expect(try token.json()["error"] == "temporarily_unavailable" && token.errorCode == "rate_limited")
        }
    }

    @Test("refreshes per session: the refused token is not spent, and other sessions go on")
    func refreshPerSession() async throws {
        try await Stack.run(Self.limits { $0.refreshPerSession = RateRule(name: "r", limit: 3, period: 60) }) {
            (stack: Stack) async throws in
            var token = try #require(try await SessionTests.signedIn(stack)["refresh_token"]?.stringValue)
            for _ in 0..<3 {
                let rotated = try await SessionTests.refresh(stack, token)
                #expect(rotated.status == .ok)
                token = try #require(try rotated.json()["refresh_token"]?.stringValue)
            }
            let refused = try await SessionTests.refresh(stack, token)
            #expect(refused.status == .tooManyRequests && refused.errorCode == "rate_limited")
            #expect(refused.headers[.retryAfter] == "20")
            // Another session of the same person has its own count.
            let other = try #require(try await SessionTests.signedIn(stack)["refresh_token"]?.stringValue)
            #expect(try await SessionTests.refresh(stack, other).status == .ok)
            // The refused token was not spent: once the window moves it rotates, and the session lives.
            stack.clock.advance(20)
            let later = try await SessionTests.refresh(stack, token)
            #expect(later.status == .ok)
            let access = try #require(try later.json()["access_token"]?.stringValue)
            #expect(try await stack.get("/v1/users/me", bearer: access).status == .ok)
        }
    }

    @Test("a spent token is never limited: with the budget full, reuse still revokes the session")
    func reuseNotLimited() async throws {
        try await Stack.run(Self.limits { $0.refreshPerSession = RateRule(name: "r", limit: 2, period: 60) }) {
            (stack: Stack) async throws in
            let first = try #require(try await SessionTests.signedIn(stack)["refresh_token"]?.stringValue)
            // The thief rotates and keeps the session's budget full.
            var current = first
            for _ in 0..<2 {
                current = try #require(
                    try await SessionTests.refresh(stack, current).json()["refresh_token"]?.stringValue)
            }
            #expect(try await SessionTests.refresh(stack, current).errorCode == "rate_limited")
            // The app presents its spent token after the retry window: reuse is detected, not rate-limited.
            stack.clock.advance(stack.configuration.sessions.refreshRetryWindow + 1)
            #expect(try await SessionTests.refresh(stack, first).errorCode == "refresh_token_reused")
            #expect(try await SessionTests.refresh(stack, current).errorCode == "refresh_token_invalid")
        }
    }

    @Test("the token endpoint counts only failed grants per address")
    func onlyFailedGrantsCount() async throws {
        try await Stack.run(Self.limits { $0.tokenPerAddress = RateRule(name: "t", limit: 2, period: 60) }) {
            (stack: Stack) async throws in
            var token = try #require(try await SessionTests.signedIn(stack)["refresh_token"]?.stringValue)
            for _ in 0..<6 {
                let rotated = try await SessionTests.refresh(stack, token)
                #expect(rotated.status == .ok)
                token = try #require(try rotated.json()["refresh_token"]?.stringValue)
            }
            for _ in 0..<2 {
                #expect(try await SessionTests.refresh(stack, "guess").errorCode == "refresh_token_invalid")
            }
            #expect(try await SessionTests.refresh(stack, "guess").errorCode == "rate_limited")
        }
    }

    @Test("authorize per address: a valid request goes back to the app as temporarily_unavailable")
    func authorizePerAddress() async throws {
        try await Stack.run(
            browsable: true, Self.limits { $0.authorizePerAddress = RateRule(name: "z", limit: 1, period: 60) }
        ) {
            stack in
            let request = AuthorizeRequest()
            #expect(
                TestBrowser.query(try #require(try await TestBrowser.get(request.url(stack)).location))["state"] != nil)
            let refused = TestBrowser.query(try #require(try await TestBrowser.get(request.url(stack)).location))
            #expect(refused["error"] == "temporarily_unavailable" && refused["error_code"] == "rate_limited")
            #expect(refused["state"] == request.state)
        }
    }

    static func nonce(_ stack: Stack, from client: String) async throws -> HTTPResponse.Status {
        try await stack.post("/v1/auth/nonce", json: [:], headers: [HTTPField.Name("X-Forwarded-For")!: client]).status
    }

    @Test("behind a trusted proxy each forwarded client has its own count; from anyone else the header is ignored")
    func trustedProxy() async throws {
        let rule = RateRule(name: "n", limit: 1, period: 60)
        let behindProxy: @Sendable (inout ServerConfiguration) -> Void = {
            $0.limits = .off
            $0.limits.noncePerAddress = rule
            $0.http.trustedProxies = ["127.0.0.1/32", "::1"]
        }
        try await Stack.run(behindProxy) { (stack: Stack) async throws in
            let first = try await Self.nonce(stack, from: "192.0.2.1")
            let second = try await Self.nonce(stack, from: "192.0.2.2")
            let again = try await Self.nonce(stack, from: "192.0.2.1")
            #expect(first == .ok && second == .ok && again == .tooManyRequests)
        }
        let direct: @Sendable (inout ServerConfiguration) -> Void = {
            $0.limits = .off
            $0.limits.noncePerAddress = rule
        }
        try await Stack.run(direct) { (stack: Stack) async throws in
            let first = try await Self.nonce(stack, from: "192.0.2.1")
            let spoofed = try await Self.nonce(stack, from: "192.0.2.2")
            #expect(first == .ok && spoofed == .tooManyRequests)
        }
    }
}

extension AbuseLimitServerTests {
    @Test("sign-ins per IPv6 /48: fresh /64s of one site share its count")
    func signInPerNetwork() async throws {
        try await Stack.run({
            $0.limits = .off
            $0.limits.signInPerAddress = RateRule(name: "a", limit: 1, period: 60)
            $0.limits.signInPerNetwork = RateRule(name: "w", limit: 3, period: 60)
            $0.http.trustedProxies = ["127.0.0.1/32", "::1"]
        }) { (stack: Stack) async throws in
            func signIn(from address: String) async throws -> TestResponse {
                try await stack.post(
                    "/v1/auth/facebook", json: ["accessToken": "EAAmadeup"],
                    headers: [HTTPField.Name("X-Forwarded-For")!: address])
            }
            // Each /64 gets past its own limit of one; the fourth /64 of the /48 is refused.
            for subnet in 1...3 {
                #expect(try await signIn(from: "2001:db8:1:\(subnet)::1").errorCode != "rate_limited")
            }
            #expect(try await signIn(from: "2001:db8:1:4::1").errorCode == "rate_limited")
            #expect(try await signIn(from: "2001:db8:2:1::1").errorCode != "rate_limited")
            // IPv4 has no aggregate.
            for host in 1...5 { #expect(try await signIn(from: "192.0.2.\(host)").errorCode != "rate_limited") }
        }
    }
}

@Suite("The Facebook call budget and the rejected-token cache")
struct FacebookBudgetTests {
    @Test("a replayed bad token costs no Graph call; Facebook's trouble is never remembered")
    func replayedToken() async throws {
        try await Stack.run { stack in
            try await stack.emulatorDelete("/_emulator/calls")
            let first = try await stack.signIn(["accessToken": "EAAmadeupmadeupmadeup"])
            #expect(first.status == .unauthorized && first.errorCode == "facebook_token_invalid")
            // `/me` runs beside `debug_token` and is cancelled once `debug_token` refuses, so
            // whether it reached Facebook, and when, is a race (CI saw both, and a `/me` landing
            // after the next look): count `debug_token` exactly and `/me` at most as often.
            func calls() async throws -> JSONValue? { try await stack.emulatorGET("/_emulator/calls")["calls"] }
            func debugAndMe() async throws -> (Int, Int) {
                let counts = try await calls()
                return (counts?["/debug_token"]?.intValue ?? 0, counts?["/me"]?.intValue ?? 0)
            }
            var (debug, me) = try await debugAndMe()
            #expect(debug == 1 && me <= 1)
            for _ in 0..<5 {
                #expect(
                    try await stack.signIn(["accessToken": "EAAmadeupmadeupmadeup"]).errorCode
                        == "facebook_token_invalid")
            }
            // The replays asked Facebook nothing.
            (debug, me) = try await debugAndMe()
            #expect(debug == 1 && me <= 1)
            let foreign = try await stack.facebookToken(app: Demo.otherAppID)
            _ = try await stack.signIn(["accessToken": .string(foreign)])
            #expect(try await stack.signIn(["accessToken": .string(foreign)]).errorCode == "facebook_token_wrong_app")
            (debug, me) = try await debugAndMe()
            #expect(debug == 2 && me <= 2)
            // Facebook down: nothing remembered, the next try asks again and succeeds.
            let token = try await stack.facebookToken()
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "/debug_token", "preset": "server_error", "count": 1])
            #expect(try await stack.signIn(["accessToken": .string(token)]).status == .serviceUnavailable)
            #expect(try await stack.signIn(["accessToken": .string(token)]).status == .ok)
            // The verdict lasts LATCHKEY_FACEBOOK_REJECTION_TTL.
            stack.clock.advance(61)
            _ = try await stack.signIn(["accessToken": "EAAmadeupmadeupmadeup"])
            #expect(try await stack.emulatorGET("/_emulator/calls")["calls"]?["/debug_token"] == 5)
        }
    }

    @Test("a checkpoint or a permission error is asked again: only final verdicts are remembered")
    func notFinal() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let token = try await stack.facebookToken()
            _ = try await stack.emulator(
                "/_emulator/faults",
                ["endpoint": "/me", "code": 190, "subcode": 459, "message": "checkpoint", "count": 1])
            #expect(try await stack.signIn(["accessToken": .string(token)]).errorCode == "facebook_checkpoint")
            #expect(try await stack.signIn(["accessToken": .string(token)]).status == .ok)
        }
    }

    @Test("the budget takes a sign-in's calls together, refuses at once when spent, and always gives back")
    func budget() async throws {
        let budget = FacebookCallBudget(maximum: 3)
        #expect(budget.acquire(2))
        #expect(!budget.acquire(2))
        await #expect { try await budget.spending(2) { 1 } } throws: {
            ($0 as? APIError)?.code == .facebookUnavailable && ($0 as? APIError)?.retryAfter == 1
        }
        budget.release(2)
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await budget.spending(3) { throw Failure() } }
        #expect(budget.inUse == 0)
        #expect(try await budget.spending(3) { budget.inUse } == 3)
        #expect(budget.inUse == 0)
    }

    @Test("a sign-in fits a budget of exactly its calls, and returns them")
    func exactBudget() async throws {
        try await Stack.run({ $0.facebook.maximumInFlight = 2 }) { (stack: Stack) async throws in
            for _ in 0..<3 {
                #expect(try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).status == .ok)
            }
        }
        var configuration = ServerConfiguration()
        configuration.facebook.apps = [.init(id: "1", secret: "s")]
        configuration.secrets.allowPlaintextSigningKeys = true
        configuration.facebook.maximumInFlight = 1
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }
}
