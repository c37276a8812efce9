import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import NIOCore
import Testing

@Suite("Facebook failures and bad input")
struct ResilienceTests {
    @Test("Facebook errors become 503 facebook_unavailable with Retry-After", arguments: ["server_error", "transient"])
    func facebookDown(preset: String) async throws {
        try await Stack.run { stack in
            let token = try await stack.facebookToken()
            _ = try await stack.emulator("/_emulator/faults", ["endpoint": "/debug_token", "preset": .string(preset)])
            let response = try await stack.signIn(["accessToken": .string(token)])
            #expect(response.status == .serviceUnavailable)
            #expect(response.errorCode == "facebook_unavailable")
            #expect(response.headers[.retryAfter] != nil)
        }
    }

    @Test("Facebook throttling becomes 503 facebook_rate_limited")
    func throttled() async throws {
        try await Stack.run { stack in
            let token = try await stack.facebookToken()
            _ = try await stack.emulator("/_emulator/faults", ["endpoint": "/me", "preset": "rate_limit_app"])
            let response = try await stack.signIn(["accessToken": .string(token)])
            #expect(response.errorCode == "facebook_rate_limited")
            #expect(response.headers[.retryAfter] == "60")
        }
    }

    @Test("a Facebook slower than the configured timeout is 503, not a hang")
    func facebookSlow() async throws {
        // The emulator holds its answer 2 s; the server gives up after 0.2 s. The margin (10x) is wide
        // enough that the outcome never depends on the machine's speed.
        try await Stack.run({ $0.facebook.timeout = 0.2 }) { stack in
            let token = try await stack.facebookToken()
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "/debug_token", "latency_ms": 2_000, "count": 1])
            let response = try await stack.signIn(["accessToken": .string(token)])
            #expect(response.errorCode == "facebook_unavailable")
        }
    }

    @Test("a Graph answer whose body stalls after the headers is still bounded by the timeout")
    func stalledBody() async throws {
        // A stand-in Graph that sends its head and the start of a body, then goes quiet for 2 s.
        let router = Router()
        router.get("/{path}") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "{\"data\":"))
                    try await Task.sleep(for: .seconds(2))
                    try await writer.write(ByteBuffer(string: "{}}"))
                    try await writer.finish(nil)
                })
        }
        let stalling = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await stalling.test(.live) { client in
            let port = try #require(client.port)
            try await Stack.run({
                $0.facebook.timeout = 0.2
                $0.facebook.graphURL = "http://127.0.0.1:\(port)"
            }) { stack in
                let response = try await stack.signIn(["accessToken": "EAAanything"])
                #expect(response.status == .serviceUnavailable && response.errorCode == "facebook_unavailable")
            }
        }
    }

    @Test("unreachable JWKS with no cached keys is 503")
    func jwksDown() async throws {
        // The HTTP client keeps retrying a refused connection until the request's deadline, so
        // the 503 comes after the Facebook timeout: a short one here, not the harness's 30 s.
        try await Stack.run({
            $0.facebook.jwksURL = "http://127.0.0.1:1/jwks"
            $0.facebook.timeout = 1
        }) { stack in
            let token = try await stack.idToken()
            let response = try await stack.signIn(["idToken": .string(token), "nonce": "raw-nonce-123"])
            #expect(response.status == .serviceUnavailable && response.errorCode == "facebook_unavailable")
        }
    }

    @Test("bad bodies get typed 4xx errors")
    func badInput() async throws {
        try await Stack.run({ $0.http.maximumBodySize = 2048 }) { stack in
            func raw(_ body: String, path: String = "/v1/auth/facebook") async throws -> TestResponse {
                try await stack.server.execute(
                    uri: path, method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: body))
            }
            #expect(try await raw("{not json").errorCode == "malformed_request")
            #expect(try await raw("[1,2]").errorCode == "malformed_request")
            #expect(try await raw(#"{"accessToken":"x","extra":1}"#).errorCode == "invalid_request")
            #expect(try await raw(#"{"accessToken":5}"#).errorCode == "invalid_request")
            #expect(try await raw(#"{}"#).errorCode == "invalid_request")
            #expect(try await raw(#"{"accessToken":"a","idToken":"b"}"#).errorCode == "invalid_request")
            let huge = try await raw(#"{"accessToken":""# + String(repeating: "A", count: 4096) + #""}"#)
            #expect(huge.status == .contentTooLarge && huge.errorCode == "request_too_large")
            let notFound = try await stack.get("/v1/nothing")
            #expect(notFound.status == .notFound && notFound.errorCode == "not_found")
            // JSON sent as a form (curl -d without a content type) is named as such, not as an
            // unknown field called after the whole body.
            let labelledForm = try await stack.server.execute(
                uri: "/v1/auth/facebook", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: #" {"accessToken":"EAAx"}"#))
            #expect(labelledForm.status == .unsupportedMediaType && labelledForm.errorCode == "malformed_request")
            #expect(try labelledForm.json()["error"]?["message"]?.stringValue?.contains("application/json") == true)
            // A parameter given twice is refused, not resolved (RFC 6749 §3.1).
            let twice = try await stack.postForm(
                "/v1/oauth/token", [("grant_type", "refresh_token"), ("refresh_token", "a"), ("refresh_token", "b")])
            #expect(twice.status == .badRequest && twice.errorCode == "invalid_request")
            // A GET on a POST endpoint is 405 with Allow, as the README promises.
            let wrongMethod = try await stack.get("/v1/auth/facebook")
            #expect(wrongMethod.status == .methodNotAllowed && wrongMethod.headers[.allow] == "POST")
        }
    }

    @Test("health and readiness answer")
    func health() async throws {
        try await Stack.run { stack in
            let health = try await stack.get("/health").json()
            let ready = try await stack.get("/ready").json()
            #expect(health == ["status": "ok"])
            #expect(ready["status"] == "ready" && ready["database"] == "ok" && ready["facebook"] == "ok")
            // The start-up credential check's answer already reported the app's Graph usage.
            #expect(ready["facebook_usage"]?[Demo.appID]?["level"] == "normal")
        }
    }
}
