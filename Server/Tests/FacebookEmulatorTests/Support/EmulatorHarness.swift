import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyShared
import Logging
import NIOCore
import Testing

@testable import FacebookEmulator

/// The demo world's fixed facts, so tests read as stories.
enum Demo {
    static let appID = "100000000000001"
    static let secret = "demo-app-secret-change-me"
    static let appToken = "\(appID)|\(secret)"
    static let proofAppID = "100000000000002"
    static let proofSecret = "second-app-secret-change-me"
    static let redirect = "latchkeydemo://auth"
    /// A fixed start time: tests never depend on the wall clock.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static func id(_ key: String, app: String = appID) -> String { appScopedUserID(appID: app, personKey: key) }
}

/// Runs `body` against a real emulator on a free loopback port.
func withEmulator(
    _ configure: (inout EmulatorConfiguration) -> Void = { _ in },
    _ body: @escaping @Sendable (EmulatorClient) async throws -> Void
) async throws {
    var configuration = EmulatorConfiguration(port: 0, clock: { Demo.start })
    configure(&configuration)
    var logger = Logger(label: "facebook-emulator-test")
    logger.logLevel = .warning
    let app = try await buildEmulator(configuration: configuration, logger: logger)
    try await app.test(.live) { client in
        try await body(EmulatorClient(client: client))
    }
}

/// A thin HTTP client over the emulator with helpers for the control API.
struct EmulatorClient: Sendable {
    let client: any TestClientProtocol

    var port: Int { client.port ?? 0 }

    @discardableResult
    func get(_ path: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await client.execute(uri: path, method: .get, headers: headers)
    }

    @discardableResult
    func delete(_ path: String) async throws -> TestResponse {
        try await client.execute(uri: path, method: .delete)
    }

    @discardableResult
    func post(_ path: String, form: [(String, String)]) async throws -> TestResponse {
        try await client.execute(
            uri: path, method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: FormEncoding.encode(form)))
    }

    @discardableResult
    func post(_ path: String, json: JSONValue = [:]) async throws -> TestResponse {
        try await client.execute(
            uri: path, method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(bytes: json.encoded()))
    }

    /// `path` with form-encoded query parameters.
    static func path(_ path: String, _ query: [(String, String)]) -> String {
        query.isEmpty ? path : path + "?" + FormEncoding.encode(query)
    }

    /// Mints a user token through the control API.
    func mintToken(
        _ user: String = "alice", app: String = Demo.appID, scopes: [String]? = nil, lifetime: Int? = nil
    ) async throws -> String {
        var body: [String: JSONValue] = ["app_id": .string(app), "user": .string(user)]
        if let scopes { body["scopes"] = .array(scopes.map(JSONValue.string)) }
        if let lifetime { body["lifetime_seconds"] = .int(lifetime) }
        let response = try await post("/_emulator/tokens", json: .object(body))
        #expect(response.status == .ok)
        return try #require(try response.json()["access_token"]?.stringValue)
    }

    /// `GET /debug_token` for `token`, with the demo app's literal app token.
    func debug(_ token: String) async throws -> JSONValue {
        let response = try await get(
            Self.path("/debug_token", [("input_token", token), ("access_token", Demo.appToken)]))
        #expect(response.status == .ok)
        return try #require(try response.json()["data"])
    }
}

extension TestResponse {
    /// The body parsed as JSON.
    func json() throws -> JSONValue { try JSONValue.decode(Data(body.readableBytesView)) }

    /// The body as text.
    var text: String { String(buffer: body) }

    /// The Graph error fields `code`, `error_subcode`, `type`, `message`.
    func graphError() throws -> (code: Int?, subcode: Int?, type: String?, message: String?) {
        let error = try json()["error"]
        return (
            error?["code"]?.intValue, error?["error_subcode"]?.intValue, error?["type"]?.stringValue,
            error?["message"]?.stringValue
        )
    }

    /// The `Location` header split into its parameters: the fragment's when the answer is there,
    /// else the query's (Facebook's empty `#_=_` fragment after a query answer is not one).
    func redirectParameters() throws -> (base: String, parameters: [String: String], fragment: Bool) {
        let location = try #require(headers[.location])
        var rest = location
        var fragment: String?
        if let hash = location.firstIndex(of: "#") {
            fragment = String(location[location.index(after: hash)...])
            rest = String(location[..<hash])
        }
        if let fragment, fragment != "_=_" { return (rest, FormEncoding.decode(fragment), true) }
        if let question = rest.firstIndex(of: "?") {
            return (
                String(rest[..<question]), FormEncoding.decode(String(rest[rest.index(after: question)...])), false
            )
        }
        return (rest, [:], false)
    }
}
