import AsyncHTTPClient
import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyShared
import NIOCore
import NIOHTTP1

/// Calls to the Graph API over the server's one shared, pooled HTTP client, with a bounded time
/// per call. Every transport problem becomes `facebook_unavailable` (503 + Retry-After), never a
/// hang; what a Graph error means is decided by the caller through `FacebookTriage`, which knows
/// whose credential the call carried.
///
/// Credentials never go in a URL: egress proxies and APM tools log URLs. Tokens travel in the
/// `Authorization` header (Graph accepts `Bearer`, §1) and secrets in form bodies.
struct GraphClient: Sendable {
    let client: HTTPClient
    let base: String
    /// Bound on a whole call, head and body, in seconds.
    let timeout: TimeInterval
    /// Where reachability is recorded for `/ready`.
    let health: FacebookHealth
    /// Where the usage Facebook reports in response headers is recorded.
    let usage: FacebookUsageMonitor
    /// Calls by endpoint, their latency and failures (`latchkey_provider_*`).
    var metrics: ServerMetrics? = nil

    /// A Graph answer: status and JSON body (Graph answers JSON even for errors).
    struct Answer: Sendable {
        let status: Int
        let body: JSONValue
        /// The app usage its headers reported, if any.
        var usage: FacebookUsage? = nil

        /// The error the answer carries at its top level, if any.
        var failure: GraphFailure? { GraphFailure(body["error"], status: status) }
    }

    /// Whether `text` is an id as Graph writes them (digits): what a path built from an id may
    /// hold, so it can name no other object or edge.
    static func isGraphID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    /// A GET whose access token (`bearer`) travels in the `Authorization` header.
    /// - Parameter app: the app the call is charged to, whose usage its answer reports; `nil` when
    ///   not known yet (the caller records it once known).
    func get(_ path: String, query: [(String, String)], bearer: String, app: String?) async throws -> Answer {
        let url = query.isEmpty ? base + path : base + path + "?" + FormEncoding.encode(query)
        return try await send(.GET, url, endpoint: Self.endpoint(path), bearer: bearer, form: nil, app: app)
    }

    /// A DELETE whose access token (`bearer`) travels in the `Authorization` header.
    func delete(_ path: String, bearer: String, app: String) async throws -> Answer {
        try await send(.DELETE, base + path, endpoint: Self.endpoint(path), bearer: bearer, form: nil, app: app)
    }

    /// A form POST: for calls carrying the app secret, which must not sit in a URL.
    func post(_ path: String, form: [(String, String)], app: String) async throws -> Answer {
        try await send(
            .POST, base + path, endpoint: Self.endpoint(path), bearer: nil, form: FormEncoding.encode(form), app: app)
    }

    /// `path` as a metric label: ids (all digits) become `{id}`, so the label names the endpoint
    /// and never a person (`/123/permissions` is `{id}/permissions`); anything unusual is `other`.
    static func endpoint(_ path: String) -> String {
        let parts = path.split(separator: "/").map { isGraphID(String($0)) ? "{id}" : String($0) }
        let name = parts.joined(separator: "/")
        let allowed = name.utf8.allSatisfy { byte in
            byte == UInt8(ascii: "_") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "{")
                || byte == UInt8(ascii: "}") || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
        }
        return !name.isEmpty && name.utf8.count <= 40 && allowed ? name : "other"
    }

    private func send(
        _ method: HTTPMethod, _ url: String, endpoint: String, bearer: String?, form: String?, app: String?
    ) async throws -> Answer {
        let started = ContinuousClock.now
        var failed = false
        defer {
            metrics?.providerCall(provider: "facebook", endpoint: endpoint, failed: failed, duration: .now - started)
        }
        let status: Int
        let headers: HTTPHeaders
        let bytes: ByteBuffer
        do {
            var request = try HTTPClient.Request(url: url, method: method)
            request.headers.add(name: "Accept", value: "application/json")
            if let bearer { request.headers.add(name: "Authorization", value: "Bearer " + bearer) }
            if let form {
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .string(form)
            }
            (status, headers, bytes) = try await BoundedExchange(client: client, timeout: timeout).send(request)
        } catch {
            // A call cancelled because its answer is no longer needed (the concurrent `debug_token`
            // already refused the token) says nothing about Facebook: an attacker's garbage token
            // must not make `/ready` report Facebook unreachable.
            if Task.isCancelled || error is CancellationError || (error as? HTTPClientError) == .cancelled {
                throw CancellationError()
            }
            health.failed()
            failed = true
            // The cause is AsyncHTTPClient's error, which names no URL; the URL itself carries no
            // credential either.
            throw APIError.facebookUnavailable("Facebook did not answer in time; try again shortly.", cause: error)
        }
        guard status < 500, let body = try? JSONValue.decode(Data(bytes.readableBytesView)), body.isObject else {
            health.failed()
            failed = true
            throw APIError.facebookUnavailable(
                "Facebook is temporarily unavailable (HTTP \(status)); try again shortly.")
        }
        health.answered()
        let answer = Answer(
            status: status, body: body,
            usage: FacebookUsage(
                appUsage: headers.first(name: "x-app-usage"),
                businessUseCase: headers.first(name: "x-business-use-case-usage")))
        if let app { record(answer, app: app) }
        return answer
    }

    /// Records the usage `answer` reported for `app`, and a code-4 throttle as the allowance spent
    /// even when it came without usage headers (Facebook's sometimes do).
    func record(_ answer: Answer, app: String) {
        if let reported = answer.usage { usage.record(reported, appID: app) }
        if answer.failure?.code == 4 { usage.recordThrottle(appID: app) }
    }
}
