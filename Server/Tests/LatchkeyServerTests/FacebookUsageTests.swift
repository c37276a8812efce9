import FacebookEmulator
import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyShared
import Testing

@testable import LatchkeyServer

/// Latchkey reads the Graph usage Facebook reports (`X-App-Usage`, `X-Business-Use-Case-Usage`),
/// shows it in `/ready`, warns, and near the limit tightens its own limits, against the
/// emulator's platform rate limit.
@Suite("Facebook's reported Graph usage")
struct FacebookUsageTests {
    /// `/ready`'s usage detail for the demo app.
    static func usage(_ stack: Stack) async throws -> JSONValue? {
        try await stack.get("/ready").json()["facebook_usage"]?[Demo.appID]
    }

    /// Pins the emulator's reported usage for the demo app, headers from the first call.
    static func pin(_ stack: Stack, _ figures: [String: JSONValue]) async throws {
        var body = figures
        body["app_id"] = .string(Demo.appID)
        body["headers_after_calls"] = 0
        _ = try await stack.emulator("/_emulator/usage", .object(body))
    }

    /// A token Facebook never issued, long enough to pass every local check.
    static let madeUp = "EAA" + String(repeating: "x", count: 60)

    @Test("/ready shows the last usage per app; no headers, or malformed ones, record nothing")
    func readyDetail() async throws {
        // No start-up credential check: its call would report usage before the test begins.
        try await Stack.run({ $0.facebook.startupCheck = .off }) { (stack: Stack) async throws in
            #expect(try await stack.get("/ready").json()["facebook_usage"] == [:])
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "*", "headers": ["X-App-Usage": .null], "count": 2])
            #expect(try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).status == .ok)
            #expect(try await stack.get("/ready").json()["facebook_usage"] == [:])
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "*", "headers": ["X-App-Usage": "{not json"], "count": 2])
            #expect(
                try await stack.signIn(["accessToken": .string(try await stack.facebookToken("bob"))]).status == .ok)
            #expect(try await stack.get("/ready").json()["facebook_usage"] == [:])

            #expect(
                try await stack.signIn(["accessToken": .string(try await stack.facebookToken("carol"))]).status == .ok)
            let detail = try #require(try await Self.usage(stack))
            #expect(detail["call_count"] == 0 && detail["total_cputime"] == 0 && detail["total_time"] == 0)
            #expect(detail["level"] == "normal")
            #expect(detail["observed_at"] == .int(Int(stack.clock.now.timeIntervalSince1970)))
        }
    }

    @Test("past the warning threshold a warning is logged once per level and again after five minutes")
    func warning() async throws {
        try await Stack.run { (stack: Stack) async throws in
            try await Self.pin(stack, ["call_count": 85])
            for user in ["alice", "bob"] {
                #expect(
                    try await stack.signIn(["accessToken": .string(try await stack.facebookToken(user))]).status == .ok)
            }
            #expect(try await Self.usage(stack)?["level"] == "warning")
            #expect(try await Self.usage(stack)?["call_count"] == 85)
            let warnings = { stack.logs.all.filter { $0.contains("latchkey.facebook.usage_high") } }
            #expect(warnings().count == 1)
            #expect(warnings().first?.hasPrefix("warning") == true)
            #expect(warnings().first?.contains("latchkey.facebook.usage_threshold=80") == true)
            stack.clock.advance(301)
            #expect(
                try await stack.signIn(["accessToken": .string(try await stack.facebookToken("carol"))]).status == .ok)
            #expect(warnings().count == 2)

            // Reports within a minute merge (highest kept); a later one starts afresh.
            try await stack.emulatorDelete("/_emulator/usage")
            stack.clock.advance(61)
            #expect(
                try await stack.signIn(["accessToken": .string(try await stack.facebookToken("dave"))]).status == .ok)
            #expect(try await Self.usage(stack)?["level"] == "normal")
            #expect(stack.logs.all.contains { $0.contains("latchkey.facebook.usage_normal") })
        }
    }

    @Test("tightened: real sign-ins still work; refused and app tokens cost no Graph call, even with the TTL off")
    func tightenedRejections() async throws {
        try await Stack.run({ $0.facebook.rejectionLifetime = 0 }) { (stack: Stack) async throws in
            // Untightened, with the rejection cache off, a replayed bad token asks Facebook again.
            _ = try await stack.signIn(["accessToken": .string(Self.madeUp)])
            try await stack.emulatorDelete("/_emulator/calls")
            #expect(try await stack.signIn(["accessToken": .string(Self.madeUp)]).errorCode == "facebook_token_invalid")
            #expect(try await stack.emulatorGET("/_emulator/calls")["calls"]?["/debug_token"] == 1)

            try await Self.pin(stack, ["total_cputime": 96])
            #expect(try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).status == .ok)
            #expect(try await Self.usage(stack)?["level"] == "tightened")
            #expect(stack.logs.all.contains { $0.contains("latchkey.facebook.usage_tightened") })

            let other = "EAA" + String(repeating: "y", count: 60)
            #expect(try await stack.signIn(["accessToken": .string(other)]).errorCode == "facebook_token_invalid")
            try await stack.emulatorDelete("/_emulator/calls")
            stack.clock.advance(300)
            for token in [other, other, "\(Demo.appID)|\(Demo.secret)", "\(Demo.appID)|anything"] {
                let response = try await stack.signIn(["accessToken": .string(token)])
                #expect(response.status == .unauthorized)
            }
            #expect(try await stack.emulatorGET("/_emulator/calls")["calls"] == [:])
            #expect(
                try await stack.signIn(["accessToken": .string("\(Demo.appID)|\(Demo.secret)")]).errorCode
                    == "facebook_token_not_user")
            // Remembered for ten minutes, then asked again.
            stack.clock.advance(301)
            #expect(try await stack.signIn(["accessToken": .string(other)]).errorCode == "facebook_token_invalid")
            #expect(try await stack.emulatorGET("/_emulator/calls")["calls"]?["/debug_token"] == 1)
            // A person's real token still signs in.
            #expect(
                try await stack.signIn(["accessToken": .string(try await stack.facebookToken("bob"))]).status == .ok)
        }
    }

    @Test("tightened: classic sign-ins per address shrink to a quarter; Limited Login keeps the full limit")
    func tightenedLimits() async throws {
        let rule = RateRule(name: "sign-in-address", limit: 8, period: 60)
        try await Stack.run({
            $0.limits = .off
            $0.limits.signInPerAddress = rule
        }) { (stack: Stack) async throws in
            // Normal: three classic attempts of one address pass the limit.
            for _ in 1...3 {
                #expect(try await stack.signIn(["accessToken": .string(Self.madeUp)]).status == .unauthorized)
            }
        }
        try await Stack.run({
            $0.limits = .off
            $0.limits.signInPerAddress = rule
        }) { (stack: Stack) async throws in
            try await Self.pin(stack, ["call_count": 99])
            #expect(try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).status == .ok)
            #expect(try await Self.usage(stack)?["level"] == "tightened")
            // 8 a minute becomes 2 for classic tokens: two more attempts, then 429 with Retry-After.
            for _ in 1...2 {
                #expect(try await stack.signIn(["accessToken": .string(Self.madeUp)]).status == .unauthorized)
            }
            let limited = try await stack.signIn(["accessToken": .string(Self.madeUp)])
            #expect(limited.status == .tooManyRequests && limited.errorCode == "rate_limited")
            #expect(limited.headers[.retryAfter] != nil)
            // A Limited Login sign-in costs no Graph call: the full limit (4 of 8 spent) still applies.
            let idToken = try await stack.idToken("bob")
            #expect(try await stack.signIn(["idToken": .string(idToken), "nonce": "raw-nonce-123"]).status == .ok)
        }
    }

    @Test("another app's token cannot set this app's usage level, however spent that app is")
    func foreignUsageIgnored() async throws {
        try await Stack.run({ $0.facebook.startupCheck = .off }) { (stack: Stack) async throws in
            _ = try await stack.emulator(
                "/_emulator/usage",
                ["app_id": .string(Demo.otherAppID), "total_time": 99, "headers_after_calls": 0])
            let foreign = try await stack.facebookToken(app: Demo.otherAppID)
            #expect(try await stack.signIn(["accessToken": .string(foreign)]).errorCode == "facebook_token_wrong_app")
            // Only debug_token, made with this app's token, reported this app's usage.
            let detail = try #require(try await Self.usage(stack))
            #expect(detail["level"] == "normal" && detail["total_time"] == 0)
            #expect(try await stack.get("/ready").json()["facebook_usage"]?[Demo.otherAppID] == nil)
        }
    }

    @Test("the emulator's budget spent: 503 facebook_rate_limited, tightened; an hour later all is normal")
    func budgetSpent() async throws {
        try await Stack.run({
            $0.limits = .off
            $0.facebook.startupCheck = .off
        }) { (stack: Stack) async throws in
            _ = try await stack.emulator("/_emulator/usage", ["app_id": .string(Demo.appID), "daily_active_users": 1])
            let alice = try await stack.facebookToken()
            // 198 of the hour's 200 calls, made by the app elsewhere.
            for _ in 1...198 {
                _ = try await stack.emulatorGET("/me?" + FormEncoding.encode([("access_token", alice)]))
            }
            // The sign-in's two calls spend the rest.
            #expect(try await stack.signIn(["accessToken": .string(alice)]).status == .ok)
            #expect(try await Self.usage(stack)?["call_count"] == 100)
            #expect(try await Self.usage(stack)?["level"] == "tightened")

            let bob = try await stack.facebookToken("bob")
            let throttled = try await stack.signIn(["accessToken": .string(bob)])
            #expect(throttled.status == .serviceUnavailable && throttled.errorCode == "facebook_rate_limited")
            #expect(throttled.headers[.retryAfter] != nil)

            stack.clock.advance(3601)
            #expect(try await stack.signIn(["accessToken": .string(bob)]).status == .ok)
            #expect(try await Self.usage(stack)?["level"] == "normal")
            #expect(try await Self.usage(stack)?["call_count"] == 1)
        }
    }

    @Test("a code-4 throttle without usage headers still counts as the allowance spent")
    func throttleWithoutHeaders() async throws {
        try await Stack.run { (stack: Stack) async throws in
            _ = try await stack.emulator(
                "/_emulator/faults",
                [
                    "endpoint": "/debug_token", "preset": "rate_limit_app", "count": 1,
                    "headers": ["X-App-Usage": .null],
                ])
            let response = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            #expect(response.errorCode == "facebook_rate_limited")
            #expect(try await Self.usage(stack)?["level"] == "tightened")
            // A throttle counts for a minute on its own: afterwards nothing says usage is high,
            // though no answer has come since.
            stack.clock.advance(61)
            #expect(try await Self.usage(stack)?["level"] == "normal")
        }
    }

    @Test("X-Business-Use-Case-Usage counts too; a report older than Facebook's hour is stale")
    func businessUseCaseAndStaleness() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let business =
                #"{"112233":[{"type":"pages","call_count":12,"total_cputime":97,"total_time":4,"estimated_time_to_regain_access":0}]}"#
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "/me", "headers": ["X-Business-Use-Case-Usage": .string(business)]])
            #expect(try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).status == .ok)
            let detail = try #require(try await Self.usage(stack))
            #expect(detail["business_use_case"] == 97 && detail["level"] == "tightened")
            stack.clock.advance(3600)
            let stale = try #require(try await Self.usage(stack))
            #expect(stale["level"] == "normal" && stale["stale"] == true)
        }
    }

    @Test("usage settings are read and validated")
    func settings() throws {
        var configuration = try ServerConfiguration(settings: [
            "LATCHKEY_FACEBOOK_APP_ID": "1", "LATCHKEY_FACEBOOK_APP_SECRET": "s",
            "LATCHKEY_FACEBOOK_USAGE_WARN_PERCENT": "70", "LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT": "90",
        ])
        #expect(configuration.facebook.usageWarningPercent == 70 && configuration.facebook.usageTightenPercent == 90)
        configuration.facebook.usageWarningPercent = 95
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.facebook.usageWarningPercent = 0
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }
}
