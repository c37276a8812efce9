import AsyncHTTPClient
import Foundation
import HTTPTypes
import LatchkeyAPI
import NIOCore
import NIOHTTP1

/// Calls to the Graph API over the server's one shared, pooled HTTP client, with a bounded time
/// per call. Every transport problem becomes `facebook_unavailable` (503 + Retry-After), never a hang.
struct GraphClient: Sendable {
    let client: HTTPClient
    let base: String
    /// Bound on a whole call, head and body, in seconds.
    let timeout: TimeInterval

    /// A Graph answer: status and JSON body (Graph answers JSON even for errors).
    struct Answer: Sendable {
        let status: Int
        let body: JSONValue
    }

    func get(_ path: String, query: [(String, String)]) async throws -> Answer {
        try await send(.GET, base + path + "?" + FormEncoding.encode(query), body: nil)
    }

    /// A form POST: for calls carrying the app secret, which must not sit in a URL that proxies log.
    func post(_ path: String, form: [(String, String)]) async throws -> Answer {
        try await send(.POST, base + path, body: FormEncoding.encode(form))
    }

    private func send(_ method: HTTPMethod, _ url: String, body form: String?) async throws -> Answer {
        let status: Int
        let bytes: ByteBuffer
        do {
            var request = try HTTPClient.Request(url: url, method: method)
            request.headers.add(name: "Accept", value: "application/json")
            if let form {
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .string(form)
            }
            (status, _, bytes) = try await BoundedExchange(client: client, timeout: timeout).send(request)
        } catch {
            throw APIError.facebookUnavailable("Facebook did not answer in time; try again shortly.", cause: error)
        }
        guard let body = try? JSONValue.decode(Data(bytes.readableBytesView)) else {
            throw APIError.facebookUnavailable("Facebook answered something unreadable (HTTP \(status)).")
        }
        // Throttling codes (§6.2) first: Facebook marks them transient too, but they need a longer wait.
        if let throttling = body["error"]?["code"]?.intValue, Self.throttlingCodes.contains(throttling) {
            throw APIError(
                .serviceUnavailable, .facebookRateLimited, "Facebook is rate-limiting this app; try again later.",
                retryAfter: 60)
        }
        // Codes 1 and 2 are Facebook's "temporary" errors even when not flagged transient (§6.2).
        let code = body["error"]?["code"]?.intValue
        if status >= 500 || body["error"]?["is_transient"] == .bool(true) || code == 1 || code == 2 {
            throw APIError.facebookUnavailable(
                "Facebook is temporarily unavailable (HTTP \(status)); try again shortly.")
        }
        return Answer(status: status, body: body)
    }

    private static let throttlingCodes: Set<Int> = [4, 17, 32, 341, 613]
}
