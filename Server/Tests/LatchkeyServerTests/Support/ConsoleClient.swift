import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyShared
import NIOCore
import Synchronization
import Testing

/// A browser's part in the console over HummingbirdTesting: it keeps cookies as a browser would
/// (by name, dropped at `Max-Age=0`), sends forms with the console's own `Origin`, and reads each
/// page's form token.
final class ConsoleClient: Sendable {
    let stack: Stack
    /// The `Origin` forms are sent with.
    let origin: String
    private let state = Mutex<(cookies: [String: String], lastSetCookies: [String])>(([:], []))

    init(_ stack: Stack, origin: String = "http://latchkey.test") {
        self.stack = stack
        self.origin = origin
    }

    /// The cookies kept, by name.
    var cookies: [String: String] { state.withLock { $0.cookies } }
    /// The `Set-Cookie` lines of the last answer.
    var lastSetCookies: [String] { state.withLock { $0.lastSetCookies } }

    /// Signs in with `key` through the sign-in form; the answer to the form.
    @discardableResult
    func signIn(_ key: String) async throws -> TestResponse {
        let form = try await get("/admin/sign-in")
        return try await post("/admin/sign-in", ["csrf": Self.formToken(form.text), "key": key])
    }

    func get(_ uri: String) async throws -> TestResponse {
        try await send(uri, .get, headers: [:], body: nil)
    }

    /// Posts a form; `csrf` is the current page's token unless `fields` gives one.
    func post(_ uri: String, _ fields: [String: String], headers: HTTPFields? = nil) async throws -> TestResponse {
        var sent = headers ?? [.init("Origin")!: origin]
        sent[.contentType] = "application/x-www-form-urlencoded"
        let body = FormEncoding.encode(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        return try await send(uri, .post, headers: sent, body: ByteBuffer(string: body))
    }

    /// The form token of a signed-in page (`GET /admin`).
    func formToken() async throws -> String {
        try Self.formToken(try await get("/admin").text)
    }

    private func send(
        _ uri: String, _ method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?
    ) async throws -> TestResponse {
        var headers = headers
        let cookies = self.cookies
        if !cookies.isEmpty {
            headers[.cookie] = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                separator: "; ")
        }
        let response = try await stack.server.execute(uri: uri, method: method, headers: headers, body: body)
        let lines = response.headers[values: .setCookie]
        state.withLock { state in
            state.lastSetCookies = lines
            for line in lines {
                let pair = line.split(separator: ";", maxSplits: 1).first ?? ""
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 2 else { continue }
                state.cookies[parts[0]] = line.contains("Max-Age=0") ? nil : parts[1]
            }
        }
        return response
    }

    /// A cookie value set by the server, to tamper with in a test.
    func setCookie(_ name: String, _ value: String?) { state.withLock { $0.cookies[name] = value } }

    /// The first `name="csrf" value="…"` of a page.
    static func formToken(_ html: String) throws -> String {
        let match = try #require(html.firstMatch(of: /name="csrf" value="([^"]+)"/))
        return String(match.output.1)
    }
}

extension TestResponse {
    /// The body as text.
    var text: String { String(buffer: body) }
}
