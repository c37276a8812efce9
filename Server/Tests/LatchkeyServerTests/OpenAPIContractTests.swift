import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import Logging
import NIOCore
import Testing

@testable import LatchkeyServer

/// docs/openapi.json against the code and the running server: the same routes, the same error
/// codes, and real answers (successes included) that the document's schemas accept.
@Suite("OpenAPI contract")
struct OpenAPIContractTests {
    static let root = Repository.root
    static func source(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }
    static let document: JSONValue = {
        (try? JSONValue.decode(Data(contentsOf: root.appendingPathComponent("docs/openapi.json")))) ?? .null
    }()

    /// `METHOD path` for every operation in the document.
    static var documented: Set<String> { operations(in: document) }

    /// `METHOD path` for every operation in `document` (this one, or the admin API's).
    static func operations(in document: JSONValue) -> Set<String> {
        var operations: Set<String> = []
        for (path, item) in document["paths"]?.objectValue ?? [:] {
            for method in (item.objectValue ?? [:]).keys { operations.insert("\(method.uppercased()) \(path)") }
        }
        return operations
    }

    @Test("the embedded document is docs/openapi.json, byte for byte (run scripts/generate-openapi after editing it)")
    func embedded() throws {
        #expect(Self.document != .null)
        #expect(OpenAPIDocument.json == (try Self.source("docs/openapi.json")))
    }

    @Test("every route the router has is documented with the same methods, and nothing else")
    func routes() async throws {
        try await Stack.run { (stack: Stack) async throws in
            // The table the server itself fills from Hummingbird's list of registered routes.
            let table = RouteTable()
            var quiet = Logger(label: "test")
            quiet.logLevel = .critical
            _ = try await buildApplication(
                configuration: stack.configuration, store: stack.store, logger: quiet, routeTable: table)
            // The admin API's routes are its own document's (AdminAPITests), on this listener too
            // while no LATCHKEY_ADMIN_LISTEN is set.
            // The console's pages are HTML, listed in docs/operations.md (ConsoleTests.routes).
            let routes = table.routes.filter { !$0.contains(" /admin") }
            #expect(routes.count >= 15)
            #expect(routes.subtracting(Self.documented).isEmpty, "registered, not documented")
            #expect(Self.documented.subtracting(routes).isEmpty, "documented, not registered")
            let admin = table.routes.subtracting(routes)
            let api = admin.filter { $0.contains(" /admin/v1/") || $0.hasSuffix(" /admin/openapi.json") }
            #expect(api == AdminAPITests.documented, "the admin API's routes")
            #expect(admin.subtracting(api) == ConsoleTests.routes, "the console's pages")
        }
    }

    @Test("GET /openapi.json serves docs/openapi.json as JSON, byte for byte")
    func served() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let response = try await stack.get("/openapi.json")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            #expect(String(buffer: response.body) == (try Self.source("docs/openapi.json")))
        }
    }

    /// The codes ErrorCode.swift declares, in order.
    static func declaredCodes() throws -> [String] {
        try source("Sources/LatchkeyAPI/ErrorCode.swift").matches(of: /ErrorCode\(rawValue: "([a-z_]+)"\)/)
            .map { String($0.output.1) }
    }

    @Test("the error-code enum is exactly ErrorCode's codes")
    func errorCodes() throws {
        let declared = try Self.declaredCodes()
        let documented = (Self.document["components"]?["schemas"]?["ErrorCode"]?["enum"]?.arrayValue ?? [])
            .compactMap(\.stringValue)
        #expect(declared.count >= 40)
        #expect(Set(declared) == Set(documented) && declared.count == documented.count)
    }

    /// Every `enum` under a `code` or `error_code` member: the codes error responses name.
    static func namedCodes(_ value: JSONValue, key: String? = nil) -> [String] {
        if let object = value.objectValue {
            var codes: [String] = []
            if key == "code" || key == "error_code" {
                codes += (object["enum"]?.arrayValue ?? []).compactMap(\.stringValue)
            }
            for (name, member) in object { codes += namedCodes(member, key: name) }
            return codes
        }
        return (value.arrayValue ?? []).flatMap { namedCodes($0) }
    }

    @Test("each error response names the codes it carries; every code is named, or said to be in no body")
    func codesPerResponse() throws {
        let declared = Set(try Self.declaredCodes())
        let named = Set(
            Self.namedCodes(Self.document["paths"] ?? .null)
                + Self.namedCodes(Self.document["components"]?["responses"] ?? .null))
        #expect(named.subtracting(declared).isEmpty, "not ErrorCode's: \(named.subtracting(declared))")
        let unnamed = declared.subtracting(named)
        let explained = Self.document["components"]?["schemas"]?["ErrorCode"]?["description"]?.stringValue ?? ""
        #expect(unnamed.count <= 5, "\(unnamed.sorted())")
        for code in unnamed.sorted() {
            #expect(
                explained.contains("`\(code)`"), "\(code) is in no response and the ErrorCode schema says nothing of it"
            )
        }
    }

    /// Expects `response` to be one the document lists for `method path`, its JSON body valid.
    static func expectConforms(
        _ response: TestResponse, _ method: String, _ path: String, in document: JSONValue = document,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let operation = document["paths"]?[path]?[method.lowercased()]
        let documented = operation?["responses"]?[String(response.status.code)]
        guard let documented else {
            Issue.record(
                "\(method) \(path) answered \(response.status.code), not documented", sourceLocation: sourceLocation)
            return
        }
        let resolved =
            documented["$ref"]?.stringValue.flatMap { reference in
                reference.split(separator: "/").last.flatMap { document["components"]?["responses"]?[String($0)] }
            } ?? documented
        let mediaTypes = Set((resolved["content"]?.objectValue ?? [:]).keys)
        let contentType = response.headers[.contentType]?.split(separator: ";").first.map(String.init)
        #expect(
            mediaTypes.isEmpty || contentType.map(mediaTypes.contains) == true,
            "\(method) \(path) \(response.status.code): content type \(contentType ?? "none")",
            sourceLocation: sourceLocation)
        guard let schema = resolved["content"]?["application/json"]?["schema"] else { return }
        let body = (try? JSONValue.decode(Data(response.body.readableBytesView))) ?? .null
        let problems = SchemaCheck(document: document).violations(body, schema)
        #expect(
            problems.isEmpty, "\(method) \(path) \(response.status.code): \(problems)", sourceLocation: sourceLocation)
    }

    @Test("a known path asked with another method is 405 with Allow; an unknown path is 404")
    func methodNotAllowed() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let trace = try await stack.server.execute(uri: "/v1/users/me", method: .trace)
            #expect(trace.status == .methodNotAllowed && trace.errorCode == "method_not_allowed")
            #expect(trace.headers[.allow] == "DELETE, GET, PATCH")
            let delete = try await stack.server.execute(uri: "/v1/auth/facebook", method: .delete)
            #expect(delete.status == .methodNotAllowed && delete.headers[.allow] == "POST")
            // The router reads `/v1/users/me/` as `/v1/users/me`, and so does the table.
            #expect(try await stack.server.execute(uri: "/v1/users/me/", method: .get).status == .unauthorized)
            let slash = try await stack.server.execute(uri: "/v1/users/me/", method: .trace)
            #expect(slash.status == .methodNotAllowed && slash.headers[.allow] == "DELETE, GET, PATCH")
            let unknown = try await stack.server.execute(uri: "/v1/nothing", method: .get)
            #expect(unknown.status == .notFound && unknown.headers[.allow] == nil)
        }
    }

    @Test("a bare request to every documented operation gets a documented status and body")
    func bareRequests() async throws {
        try await Stack.run { (stack: Stack) async throws in
            for operation in Self.documented.sorted() {
                let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
                // A path parameter gets a value of its own name (`/identities/{provider}` → `/identities/provider`).
                let uri = parts[1].replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")
                let response = try await stack.server.execute(
                    uri: uri, method: HTTPRequest.Method(parts[0]) ?? .get,
                    headers: [.contentType: "application/json"], body: ByteBuffer(string: parts[0] == "GET" ? "" : "{}")
                )
                #expect(response.status.code < 500, "\(operation)")
                Self.expectConforms(response, parts[0], parts[1])
            }
        }
    }

    @Test("real sessions, successes and failures, match the document")
    func flows() async throws {
        try await Stack.run(browsable: true, { $0.users.writableProperties = ["nickname"] }) {
            (stack: Stack) async throws in
            for path in [
                "/health", "/ready", "/.well-known/jwks.json", "/.well-known/openid-configuration",
                "/.well-known/oauth-authorization-server", "/openapi.json",
            ] {
                Self.expectConforms(try await stack.get(path), "GET", path)
            }
            Self.expectConforms(try await stack.post("/v1/auth/nonce", json: [:]), "POST", "/v1/auth/nonce")
            let classic = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            #expect(classic.status == .ok)
            Self.expectConforms(classic, "POST", "/v1/auth/facebook")
            let limited = try await stack.signIn([
                "idToken": .string(try await stack.idToken(scopes: ["email"])), "nonce": "raw-nonce-123",
            ])
            #expect(limited.status == .ok)
            Self.expectConforms(limited, "POST", "/v1/auth/facebook")
            Self.expectConforms(try await stack.signIn(["accessToken": "EAAmadeup"]), "POST", "/v1/auth/facebook")
            Self.expectConforms(try await stack.signIn(["idToken": "a.b.c"]), "POST", "/v1/auth/facebook")
            let session = try #require(try classic.json()["session"])
            let access = try #require(session["access_token"]?.stringValue)
            let refresh = try #require(session["refresh_token"]?.stringValue)
            Self.expectConforms(try await stack.get("/v1/users/me", bearer: access), "GET", "/v1/users/me")
            Self.expectConforms(try await stack.get("/v1/users/me", bearer: "x"), "GET", "/v1/users/me")
            for properties: JSONValue in [["nickname": "Al"], ["email": "x@example.com"]] {
                let patched = try await stack.server.execute(
                    uri: "/v1/users/me", method: .patch,
                    headers: [.authorization: "Bearer \(access)", .contentType: "application/json"],
                    body: ByteBuffer(bytes: JSONValue.object(["properties": properties]).encoded()))
                Self.expectConforms(patched, "PATCH", "/v1/users/me")
            }
            let rotated = try await SessionTests.refresh(stack, refresh)
            #expect(rotated.status == .ok)
            Self.expectConforms(rotated, "POST", "/v1/oauth/token")
            Self.expectConforms(try await SessionTests.refresh(stack, refresh), "POST", "/v1/oauth/token")
            Self.expectConforms(try await SessionTests.refresh(stack, "guess"), "POST", "/v1/oauth/token")
            let newAccess = try #require(try rotated.json()["access_token"]?.stringValue)
            let limitedAccess = try #require(try limited.json()["session"]?["access_token"]?.stringValue)
            let logout = try await stack.server.execute(
                uri: "/v1/auth/logout", method: .post, headers: [.authorization: "Bearer \(limitedAccess)"])
            #expect(logout.status == .noContent)
            Self.expectConforms(logout, "POST", "/v1/auth/logout")
            let all = try await stack.server.execute(
                uri: "/v1/auth/logout-all", method: .post, headers: [.authorization: "Bearer \(newAccess)"])
            Self.expectConforms(all, "POST", "/v1/auth/logout-all")
            // Easy Login's code, redeemed, then replayed.
            let request = AuthorizeRequest()
            let code = try #require(try await EasyLoginTests.redirect(stack, request)["code"])
            let redeemed = try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code))
            #expect(redeemed.status == .ok)
            Self.expectConforms(redeemed, "POST", "/v1/oauth/token")
            let replayed = try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code))
            #expect(replayed.errorCode == "authorization_code_reused")
            Self.expectConforms(replayed, "POST", "/v1/oauth/token")
        }
    }
}
