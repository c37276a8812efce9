import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import NIOCore
import Testing

@testable import LatchkeyServer

/// docs/openapi.json against the code and the running server: the same routes, the same error
/// codes, and real answers (successes included) that the document's schemas accept.
@Suite("OpenAPI contract")
struct OpenAPIContractTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static func source(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }
    static let document: JSONValue = {
        (try? JSONValue.decode(Data(contentsOf: root.appendingPathComponent("docs/openapi.json")))) ?? .null
    }()

    /// `METHOD path` for every operation in the document.
    static var documented: Set<String> {
        var operations: Set<String> = []
        for (path, item) in document["paths"]?.objectValue ?? [:] {
            for method in (item.objectValue ?? [:]).keys { operations.insert("\(method.uppercased()) \(path)") }
        }
        return operations
    }

    @Test("the embedded document is docs/openapi.json (run scripts/generate-openapi after editing it)")
    func embedded() throws {
        #expect(Self.document != .null)
        #expect(try JSONValue.decode(Data(OpenAPIDocument.json.utf8)) == Self.document)
    }

    @Test("every route the server registers is documented, and nothing else")
    func routes() throws {
        let routes = try Self.source("Sources/LatchkeyServer/HTTP/Routes.swift")
        var registered: Set<String> = []
        let pattern = /route\(\.(get|post|patch|put|delete), (?:"([^"]+)"|ServerConfiguration\.(\w+))\)/
        for match in routes.matches(of: pattern) {
            let path =
                match.output.2.map(String.init)
                ?? (match.output.3 == "facebookCallbackPath" ? ServerConfiguration.facebookCallbackPath : "?")
            registered.insert("\(match.output.1.uppercased()) \(path)")
        }
        #expect(registered.count >= 14)
        #expect(registered == Self.documented)
    }

    @Test("the error-code enum is exactly ErrorCode's codes")
    func errorCodes() throws {
        let declared = try Self.source("Sources/LatchkeyAPI/ErrorCode.swift")
            .matches(of: /ErrorCode\(rawValue: "([a-z_]+)"\)/).map { String($0.output.1) }
        let documented = (Self.document["components"]?["schemas"]?["ErrorCode"]?["enum"]?.arrayValue ?? [])
            .compactMap(\.stringValue)
        #expect(Set(declared) == Set(documented) && declared.count == documented.count)
    }

    /// Expects `response` to be one the document lists for `method path`, its JSON body valid.
    static func expectConforms(
        _ response: TestResponse, _ method: String, _ path: String, sourceLocation: SourceLocation = #_sourceLocation
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
            #expect(trace.headers[.allow] == "GET, PATCH")
            let delete = try await stack.server.execute(uri: "/v1/auth/facebook", method: .delete)
            #expect(delete.status == .methodNotAllowed && delete.headers[.allow] == "POST")
            let unknown = try await stack.server.execute(uri: "/v1/nothing", method: .get)
            #expect(unknown.status == .notFound && unknown.headers[.allow] == nil)
        }
    }

    @Test("a bare request to every documented operation gets a documented status and body")
    func bareRequests() async throws {
        try await Stack.run { (stack: Stack) async throws in
            for operation in Self.documented.sorted() {
                let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
                let response = try await stack.server.execute(
                    uri: parts[1], method: HTTPRequest.Method(parts[0]) ?? .get,
                    headers: [.contentType: "application/json"], body: ByteBuffer(string: parts[0] == "GET" ? "" : "{}")
                )
                #expect(response.status.code < 500, "\(operation)")
                Self.expectConforms(response, parts[0], parts[1])
            }
        }
    }

    @Test("real sessions, successes and failures, match the document")
    func flows() async throws {
        try await Stack.run({ $0.userWritableProperties = ["nickname"] }) { (stack: Stack) async throws in
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
        }
    }
}
