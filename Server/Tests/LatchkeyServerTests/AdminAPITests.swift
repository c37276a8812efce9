import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyShared
import Logging
import NIOCore
import Testing

@testable import LatchkeyServer

/// The admin API (`/admin/v1`, docs/admin-openapi.json) over a live server: every call, each
/// answer held to the document, who may call it, and what each call leaves in the audit log.
@Suite("Admin API")
struct AdminAPITests {
    static let document: JSONValue = {
        (try? JSONValue.decode(Data(contentsOf: Repository.root.appendingPathComponent("docs/admin-openapi.json"))))
            ?? .null
    }()

    /// `METHOD path` for every operation in the admin document.
    static var documented: Set<String> { OpenAPIContractTests.operations(in: document) }

    @Test("the embedded document is docs/admin-openapi.json, byte for byte (scripts/generate-openapi)")
    func embedded() throws {
        #expect(Self.document != .null)
        let file = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/admin-openapi.json"), encoding: .utf8)
        #expect(AdminOpenAPIDocument.json == file)
    }

    @Test("a bare request to every documented operation, with a key and without, gets a documented answer")
    func bareRequests() async throws {
        try await Stack.run { stack in
            let key = try await Self.adminKey(stack)
            for operation in Self.documented.sorted() {
                let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
                let uri = parts[1].replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")
                let method = HTTPRequest.Method(parts[0]) ?? .get
                for presented in [nil, key] {
                    let response = try await Self.call(
                        stack, method, uri, key: presented, json: parts[0] == "GET" ? nil : [:], documented: parts[1])
                    #expect(response.status.code < 500, "\(operation)")
                }
            }
        }
    }

    /// Makes an admin key in the stack's store, as `latchkey admin keys create` does; its text.
    static func adminKey(_ stack: Stack, name: String = "tests") async throws -> String {
        let secret = AdminKeySecret.generate()
        try await stack.store.createAdminKey(
            StoredAdminKey(id: secret.id, name: name, hash: secret.hash, createdAt: stack.clock.now), by: .commandLine)
        return secret.text
    }

    /// An admin call with `key` (none when `nil`), its answer held to the admin document.
    @discardableResult
    static func call(
        _ stack: Stack, _ method: HTTPRequest.Method, _ uri: String, key: String?, json: JSONValue? = nil,
        documented path: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> TestResponse {
        var headers = HTTPFields()
        if let key { headers[.authorization] = "Bearer \(key)" }
        if json != nil { headers[.contentType] = "application/json" }
        let response = try await stack.server.execute(
            uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(bytes: $0.encoded()) })
        let template = path ?? String(uri.split(separator: "?").first ?? "")
        OpenAPIContractTests.expectConforms(
            response, method.rawValue, template, in: document, sourceLocation: sourceLocation)
        return response
    }

    @Test("no key, a malformed, unknown, wrong or revoked key, or a user's access token: 401 admin_key_invalid")
    func refusedKeys() async throws {
        try await Stack.run { stack in
            let key = try await Self.adminKey(stack)
            let other = AdminKeySecret.generate().text
            let wrongSecret = String(key.prefix(21)) + String(other.dropFirst(21))
            let signedIn = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
            let access = try #require(try signedIn.json()["session"]?["access_token"]?.stringValue)
            for presented in [nil, "", "lka_nothex", other, wrongSecret, access, key + "x"] as [String?] {
                let response = try await Self.call(stack, .get, "/admin/v1/users", key: presented)
                #expect(
                    response.status == .unauthorized && response.errorCode == "admin_key_invalid",
                    "\(presented ?? "none")")
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
            }
            #expect(try await Self.call(stack, .get, "/admin/v1/users", key: key).status == .ok)
            // Revoked through the API itself: the next call with it is refused.
            let id = String(key.dropFirst(4).prefix(16))
            let revoked = try await Self.call(
                stack, .delete, "/admin/v1/admin-keys/\(id)", key: key, documented: "/admin/v1/admin-keys/{id}")
            #expect(try revoked.json()["adminKey"]?["revokedAt"] == .int(Int(stack.clock.now.timeIntervalSince1970)))
            #expect(try await Self.call(stack, .get, "/admin/v1/users", key: key).errorCode == "admin_key_invalid")
        }
    }

    @Test("wrong keys from one address are limited; a good key is never counted, nor locked out")
    func guessingIsLimited() async throws {
        try await Stack.run { stack in
            let key = try await Self.adminKey(stack)
            let limit = try #require(stack.configuration.limits.adminPerAddress?.limit)
            for _ in 0..<(limit * 2) {
                #expect(try await Self.call(stack, .get, "/admin/v1/users", key: key).status == .ok)
            }
            for _ in 0..<limit {
                #expect(try await Self.call(stack, .get, "/admin/v1/users", key: nil).status == .unauthorized)
            }
            let limited = try await Self.call(stack, .get, "/admin/v1/users", key: nil)
            #expect(limited.status == .tooManyRequests && limited.headers[.retryAfter] != nil)
            // The operator behind the same address still gets in.
            #expect(try await Self.call(stack, .get, "/admin/v1/users", key: key).status == .ok)
            // One log line for the burst, naming the rule and never the address counted.
            _ = try await Self.call(stack, .get, "/admin/v1/users", key: "lka_guess")
            let refused = stack.logs.all.filter { $0.contains("latchkey.limits.refused") }
            #expect(refused.count == 1 && refused.first?.contains("latchkey.limit.rule=admin-address") == true)
            #expect(refused.first?.contains("127.0.0.1") == false)
        }
    }

    @Test("find a person who signed in through the emulator, read, edit, end a session, disable, delete")
    func userLifecycle() async throws {
        try await Stack.run { stack in
            let key = try await Self.adminKey(stack, name: "ops")
            let signedIn = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("alice"))])
            let userID = try #require(try signedIn.json()["user"]?["id"]?.stringValue)
            let refresh = try #require(try signedIn.json()["session"]?["refresh_token"]?.stringValue)
            _ = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("bob"))])
            let user = "/admin/v1/users/\(userID)"

            let everyone = try await Self.call(stack, .get, "/admin/v1/users?limit=1", key: key).json()
            #expect(everyone["users"]?.arrayValue?.count == 1 && everyone["nextCursor"]?.stringValue != nil)
            let next = try #require(everyone["nextCursor"]?.stringValue)
            let second = try await Self.call(stack, .get, "/admin/v1/users?limit=1&cursor=\(next)", key: key).json()
            #expect(second["users"]?.arrayValue?.count == 1 && second["nextCursor"] == .null)
            let subject = try #require(
                try signedIn.json()["user"]?["identities"]?.arrayValue?.first?["subject"]?.stringValue)
            for query in [userID, subject] {
                let found = try await Self.call(stack, .get, "/admin/v1/users?query=\(query)", key: key).json()
                #expect(found["users"]?.arrayValue?.map { $0["id"] } == [.string(userID)], "\(query)")
            }
            for bad in ["limit=0", "limit=201", "cursor=nonsense", "query=bad%20name=x", "other=1", "limit=1&limit=2"] {
                let refused = try await Self.call(
                    stack, .get, "/admin/v1/users?\(bad)", key: key, documented: "/admin/v1/users")
                #expect(refused.errorCode == "invalid_request", "\(bad)")
            }

            let view = try await Self.call(stack, .get, user, key: key, documented: "/admin/v1/users/{id}").json()
            #expect(view["user"]?["id"] == .string(userID) && view["sessions"]?.arrayValue?.count == 1)
            #expect(view["events"]?.arrayValue?.contains { $0["type"] == "user.created" } == true)
            let sessionID = try #require(view["sessions"]?.arrayValue?.first?["id"]?.stringValue)

            let patched = try await Self.call(
                stack, .patch, user, key: key, json: ["properties": ["tier": "gold", "email": .null]],
                documented: "/admin/v1/users/{id}")
            #expect(try patched.json()["user"]?["properties"]?["tier"] == "gold")
            #expect(try patched.json()["user"]?["properties"]?["email"] == nil)
            let found = try await Self.call(stack, .get, "/admin/v1/users?query=tier%3Dgold", key: key).json()
            #expect(found["users"]?.arrayValue?.map { $0["id"] } == [.string(userID)])

            // Ending the session: the app's next refresh fails.
            #expect(
                try await Self.call(
                    stack, .delete, "\(user)/sessions/\(sessionID)", key: key,
                    documented: "/admin/v1/users/{id}/sessions/{sessionId}"
                ).status == .noContent)
            #expect(try await SessionTests.refresh(stack, refresh).errorCode == "refresh_token_invalid")
            #expect(
                try await Self.call(
                    stack, .delete, "\(user)/sessions/\(sessionID)", key: key,
                    documented: "/admin/v1/users/{id}/sessions/{sessionId}"
                ).status == .notFound)

            let disabled = try await Self.call(
                stack, .post, "\(user)/disable", key: key, documented: "/admin/v1/users/{id}/disable")
            #expect(try disabled.json()["sessionsEnded"] == 0)
            let refused = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("alice"))])
            #expect(refused.errorCode == "user_disabled")
            _ = try await Self.call(stack, .post, "\(user)/enable", key: key, documented: "/admin/v1/users/{id}/enable")
            #expect(
                try await stack.signIn(["accessToken": .string(try await stack.facebookToken("alice"))]).status == .ok)
            let ended = try await Self.call(
                stack, .delete, "\(user)/sessions", key: key, documented: "/admin/v1/users/{id}/sessions")
            #expect(try ended.json()["sessionsEnded"] == 1)

            let last = try await Self.call(
                stack, .delete, "\(user)/identities/facebook/\(subject)", key: key,
                documented: "/admin/v1/users/{id}/identities/{provider}/{subject}")
            #expect(last.status == .conflict && last.errorCode == "last_sign_in_method")
            let factors = try await Self.call(
                stack, .delete, "\(user)/factors", key: key, documented: "/admin/v1/users/{id}/factors")
            #expect(try factors.json()["factorsRemoved"] == 0)

            // Every call above is an audit event naming the key, and so is each change it made.
            let events = try await stack.store.auditEvents(userID: userID, limit: 100)
            let calls = events.filter { $0.event.type == .adminCall }
            // Nine calls named the user (the searches named none), answered 200, 204, 404 or 409.
            #expect(calls.count == 9)
            #expect(Set(calls.compactMap { $0.event.detail["status"]?.intValue }) == [200, 204, 404, 409])
            #expect(calls.allSatisfy { $0.event.detail["name"] == "ops" && $0.event.detail["admin_key"] != nil })
            #expect(
                events.first { $0.event.type == .userDisabled }?.event.detail["admin_key"]
                    == calls.first?.event.detail["admin_key"])

            #expect(
                try await Self.call(stack, .delete, user, key: key, documented: "/admin/v1/users/{id}").status
                    == .noContent)
            #expect(
                try await Self.call(stack, .get, user, key: key, documented: "/admin/v1/users/{id}").errorCode
                    == "not_found")
            #expect(
                try await Self.call(stack, .delete, user, key: key, documented: "/admin/v1/users/{id}").status
                    == .notFound)
            #expect(
                try await stack.store.auditEvents(userID: userID, limit: 10).contains {
                    // The tombstone, by an admin, naming the key that deleted the account.
                    $0.event.type == .userDeleted && $0.event.detail["by"] == "admin"
                        && $0.event.detail["admin_key"] != nil
                })
        }
    }

    @Test("control characters, out-of-range cursors and encoded ids are refused or decoded alike on every backend")
    func hostileInput() async throws {
        try await Stack.run { stack in
            let key = try await Self.adminKey(stack)
            let signedIn = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("alice"))])
            let userID = try #require(try signedIn.json()["user"]?["id"]?.stringValue)
            for query in ["a%00b", "country%3Da%00"] {
                let refused = try await Self.call(
                    stack, .get, "/admin/v1/users?query=\(query)", key: key, documented: "/admin/v1/users")
                #expect(refused.errorCode == "invalid_request", "\(query)")
            }
            for cursor in ["300000000000000000.u", "-99999999999999999.u", "9999999999999999999999.u", "0.a\u{0}b"] {
                let text = Base64URL.encode(Data(cursor.utf8))
                let refused = try await Self.call(
                    stack, .get, "/admin/v1/users?cursor=\(text)", key: key, documented: "/admin/v1/users")
                #expect(refused.errorCode == "invalid_request", "\(cursor)")
            }
            for (method, path, template) in [
                (HTTPRequest.Method.get, "/admin/v1/users/a%00b", "/admin/v1/users/{id}"),
                (.post, "/admin/v1/users/a%00b/disable", "/admin/v1/users/{id}/disable"),
                (.post, "/admin/v1/deletions/a%00/approve", "/admin/v1/deletions/{id}/approve"),
                (.delete, "/admin/v1/admin-keys/a%00", "/admin/v1/admin-keys/{id}"),
            ] {
                #expect(
                    try await Self.call(stack, method, path, key: key, documented: template).status == .notFound,
                    "\(path)")
            }
            // Percent-encoded, the id is the same user's, and so is the audit event.
            let encoded = userID.utf8.map { String(format: "%%%02X", $0) }.joined()
            #expect(
                try await Self.call(
                    stack, .post, "/admin/v1/users/\(encoded)/disable", key: key,
                    documented: "/admin/v1/users/{id}/disable"
                ).status == .ok)
            let events = try await stack.store.auditEvents(userID: userID, limit: 5)
            #expect(
                events.contains {
                    $0.event.type == .adminCall && $0.event.detail["route"] == "/admin/v1/users/{id}/disable"
                })
        }
    }

    @Test("queued deletion requests: listed, approved or refused once; signing keys listed and rotated")
    func deletionsAndKeys() async throws {
        try await Stack.run { stack in
            let key = try await Self.adminKey(stack)
            _ = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("alice"))])
            let subject = try #require(
                try await stack.store.searchUsers(.all, after: nil, limit: 1).first?.identities.first?.subject)
            for (id, person) in [("r1", subject), ("r2", "unknown-person-held")] {
                _ = try await stack.store.receiveDeletionRequest(
                    NewDeletionRequest(
                        id: id, code: "code-\(id)", provider: "facebook", subject: person, appID: Demo.appID,
                        policy: .queue, propertyKeys: []), now: stack.clock.now)
            }
            let waiting = try await Self.call(stack, .get, "/admin/v1/deletions", key: key).json()
            #expect(
                waiting["deletions"]?.arrayValue?.map { $0["id"] } == ["r1"],
                "a request about nobody held is done at once")
            #expect(
                try await Self.call(stack, .get, "/admin/v1/deletions?status=all", key: key).json()["deletions"]?
                    .arrayValue?.count == 2)
            #expect(
                try await Self.call(stack, .get, "/admin/v1/deletions?status=nope", key: key).errorCode
                    == "invalid_request")

            for reason: JSONValue in [["reason": ""], ["reason": .string(String(repeating: "x", count: 501))], [:]] {
                let refused = try await Self.call(
                    stack, .post, "/admin/v1/deletions/r1/refuse", key: key, json: reason,
                    documented: "/admin/v1/deletions/{id}/refuse")
                #expect(refused.errorCode == "invalid_request")
            }
            let approved = try await Self.call(
                stack, .post, "/admin/v1/deletions/r1/approve", key: key, documented: "/admin/v1/deletions/{id}/approve"
            )
            #expect(try approved.json()["deletion"]?["status"] == "in_progress")
            let twice = try await Self.call(
                stack, .post, "/admin/v1/deletions/r1/approve", key: key,
                documented: "/admin/v1/deletions/{id}/approve")
            #expect(twice.status == .conflict && twice.errorCode == "deletion_not_pending")
            let again = try await Self.call(
                stack, .post, "/admin/v1/deletions/r1/refuse", key: key, json: ["reason": "Legal hold"],
                documented: "/admin/v1/deletions/{id}/refuse")
            #expect(again.status == .conflict && again.errorCode == "deletion_not_pending")
            #expect(
                try await Self.call(
                    stack, .post, "/admin/v1/deletions/none/approve", key: key,
                    documented: "/admin/v1/deletions/{id}/approve"
                ).status == .notFound)

            let keys = try await Self.call(stack, .get, "/admin/v1/keys", key: key).json()
            #expect(keys["keys"]?.arrayValue?.map { $0["role"] } == ["signing"])
            stack.clock.advance(1)
            let rotated = try await Self.call(stack, .post, "/admin/v1/keys/rotate", key: key)
            #expect(rotated.status == .created)
            let after = try await Self.call(stack, .get, "/admin/v1/keys", key: key).json()
            #expect(after["keys"]?.arrayValue?.first?["kid"] == (try rotated.json()["kid"]))
            #expect(after["keys"]?.arrayValue?.map { $0["role"] } == ["pending", "signing"])
            let listed = try await Self.call(stack, .get, "/admin/v1/admin-keys", key: key).json()
            #expect(
                listed["adminKeys"]?.arrayValue?.count == 1
                    && listed["adminKeys"]?.arrayValue?.first?["lastUsedAt"] != .null)
        }
    }

    @Test("with LATCHKEY_ADMIN_LISTEN the admin API answers there only; the public listener says 404 under /admin")
    func separateListener() async throws {
        try await Stack.run { stack in
            let key = try await Self.adminKey(stack)
            var configuration = stack.configuration
            configuration.operations.adminListen = "127.0.0.1:0"
            var quiet = Logger(label: "test")
            quiet.logLevel = .critical
            let (ports, bound) = AsyncStream.makeStream(of: Int.self)
            let table = RouteTable()
            let application = try await buildApplication(
                configuration: configuration, store: stack.store, logger: quiet, routeTable: RouteTable(),
                adminRouteTable: table,
                onAdminServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0) })
            try await application.test(.live) { client in
                for path in [
                    "/admin/v1/users", "/admin/openapi.json", "/admin", "/admin/sign-in", "/admin/console.css",
                ] {
                    let response = try await client.execute(
                        uri: path, method: .get, headers: [.authorization: "Bearer \(key)"])
                    #expect(response.status == .notFound, "\(path)")
                }
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next())
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/admin/v1/users")
                request.headers.add(name: "Authorization", value: "Bearer \(key)")
                let answer = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                #expect(answer.status == .ok)
                let refused = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/admin/v1/users"), timeout: .seconds(30))
                #expect(refused.status == .unauthorized)
                let document = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/admin/openapi.json"), timeout: .seconds(30))
                let body = try await document.body.collect(upTo: 1 << 22)
                #expect(String(buffer: body) == AdminOpenAPIDocument.json)
                let console = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/admin/sign-in"), timeout: .seconds(30))
                #expect(console.status == .ok)
            }
            #expect(table.routes.contains("GET /admin/v1/users") && table.routes.contains("GET /admin/users/{id}"))
        }
    }
}
