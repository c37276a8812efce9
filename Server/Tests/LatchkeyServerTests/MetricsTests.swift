import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeySQLite
import Logging
import NIOCore
import Testing

@testable import LatchkeyServer

/// `GET /metrics`, scraped after real sign-ins through the emulator and parsed by a strict reader
/// of Prometheus' text format: the documented names and labels, with counts that follow what
/// happened, and nothing personal in any label.
@Suite("Metrics")
struct MetricsTests {
    static func scrape(_ stack: Stack, key: String?) async throws -> (TestResponse, PrometheusText?) {
        var headers = HTTPFields()
        if let key { headers[.authorization] = "Bearer \(key)" }
        let response = try await stack.server.execute(uri: "/metrics", method: .get, headers: headers)
        guard response.status == .ok else { return (response, nil) }
        return (response, try PrometheusText(String(buffer: response.body)))
    }

    @Test("sign-ins, errors, provider calls, second factors and gauges, in the documented names")
    func scraped() async throws {
        try await Stack.run { stack in
            let key = try await AdminAPITests.adminKey(stack)
            let (refused, _) = try await Self.scrape(stack, key: nil)
            #expect(refused.status == .unauthorized && refused.errorCode == "admin_key_invalid")

            let classic = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("alice"))])
            #expect(classic.status == .ok)
            _ = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("alice"))])
            let limited = try await stack.signIn([
                "idToken": .string(try await stack.idToken("bob")), "nonce": .string(Demo.rawNonce),
            ])
            #expect(limited.status == .ok)
            _ = try await stack.signIn(["accessToken": "EAAmadeup"])
            _ = try await stack.get("/v1/users/me", bearer: "nope")
            let userID = try #require(try classic.json()["user"]?["id"]?.stringValue)

            let (response, parsed) = try await Self.scrape(stack, key: key)
            #expect(response.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
            let metrics = try #require(parsed)
            #expect(metrics.types["latchkey_http_requests_total"] == "counter")
            #expect(metrics.types["latchkey_http_request_duration_seconds"] == "histogram")
            #expect(
                metrics.value(
                    "latchkey_http_requests_total", ["method": "POST", "route": "/v1/auth/facebook", "status": "200"])
                    == 3)
            #expect(
                metrics.value(
                    "latchkey_sign_ins_total", ["provider": "facebook", "method": "classic", "outcome": "created"]) == 1
            )
            #expect(
                metrics.value(
                    "latchkey_sign_ins_total", ["provider": "facebook", "method": "classic", "outcome": "returning"])
                    == 1)
            #expect(
                metrics.value(
                    "latchkey_sign_ins_total",
                    ["provider": "facebook", "method": "limited_login", "outcome": "created"])
                    == 1)
            #expect(metrics.value("latchkey_errors_total", ["code": "unauthorized"]) == 1)
            #expect(metrics.samples("latchkey_errors_total").count >= 2, "the made-up token's code too")
            #expect(
                metrics.samples(
                    "latchkey_provider_requests_total", matching: ["provider": "facebook", "outcome": "answered"]
                )
                .reduce(0) { $0 + $1.value } >= 2)
            #expect(
                metrics.value("latchkey_jwks_refreshes_total", ["provider": "facebook", "outcome": "fetched"]) == 1)
            #expect(metrics.value("latchkey_active_sessions") == 3)
            #expect(metrics.value("latchkey_jobs_due") == 0)
            #expect(metrics.value("latchkey_deletion_requests_open", ["status": "received"]) == 0)
            #expect(
                metrics.value(
                    "latchkey_http_request_duration_seconds_count", ["method": "POST", "route": "/v1/auth/facebook"])
                    == 4)
            // The store's operations (PostgreSQL: by name; SQLite: each transaction) and, on
            // SQLite, how many transactions each commit carried.
            #expect(metrics.types["latchkey_database_operation_duration_seconds"] == "histogram")
            #expect(
                metrics.samples("latchkey_database_operation_duration_seconds_count").reduce(0) { $0 + $1.value } >= 6)
            if stack.store is SQLiteStore {
                #expect(metrics.types["latchkey_sqlite_group_commit_transactions"] == "histogram")
                #expect((metrics.value("latchkey_sqlite_group_commit_transactions_count") ?? 0) >= 3)
                #expect(
                    metrics.samples("latchkey_database_operation_duration_seconds_count").map { $0.labels["operation"] }
                        == ["transaction"])
            } else {
                #expect(
                    metrics.value("latchkey_database_operation_duration_seconds_count", ["operation": "sign-in"]) != nil
                )
            }
            // Nothing personal in a label: no user id, no token, no address, no raw path.
            for sample in metrics.samples {
                for value in sample.labels.values {
                    #expect(!value.contains(userID) && !value.contains("EAA") && !value.contains("127.0.0.1"))
                }
            }
            // The scrape itself was not an audit event.
            #expect(try await stack.store.adminKeys().first?.lastUsedAt == nil)
        }
    }

    @Test("with LATCHKEY_ADMIN_LISTEN, /metrics is on the admin listener only, without a key")
    func onTheAdminListener() async throws {
        try await Stack.run { stack in
            var configuration = stack.configuration
            configuration.operations.adminListen = "127.0.0.1:0"
            var quiet = Logger(label: "test")
            quiet.logLevel = .critical
            let (ports, bound) = AsyncStream.makeStream(of: Int.self)
            let application = try await buildApplication(
                configuration: configuration, store: stack.store, logger: quiet,
                onAdminServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0) })
            try await application.test(.live) { client in
                #expect(try await client.execute(uri: "/metrics", method: .get).status == .notFound)
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next())
                let answer = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(30))
                #expect(answer.status == .ok)
                let text = String(buffer: try await answer.body.collect(upTo: 1 << 22))
                let metrics = try PrometheusText(text)
                #expect(metrics.value("latchkey_active_sessions") == 0)
                #expect(
                    metrics.value(
                        "latchkey_http_requests_total", ["method": "GET", "route": "NotFound", "status": "404"])
                        == 1)
            }
        }
    }
}
