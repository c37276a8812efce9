import AsyncHTTPClient
import FacebookEmulator
import Foundation
import LatchkeyAPI
import LatchkeyPostgres
import LatchkeyServer
import LatchkeyShared
import NIOCore
import NIOHTTP1
import Testing

/// Three real `latchkey serve` processes on one PostgreSQL schema, requests spread over them:
/// they must behave as one server. Nothing shared may live in one process (replay protection,
/// rotation and reuse detection, sessions, signing keys).
@Suite(
    "Many nodes on one PostgreSQL",
    .enabled(
        if: TestEnvironment.isCI
            || (LatchkeyBinary.url != nil && ProcessInfo.processInfo.environment["LATCHKEY_TEST_POSTGRES_URL"] != nil),
        "needs the latchkey binary and scripts/test's PostgreSQL"),
    // Its nodes are always on PostgreSQL: the second pass (the in-process server on PostgreSQL)
    // would only run the same processes again, beside everything else.
    .disabled(if: TestStores.postgres, "runs in the first pass"),
    .timeLimit(.minutes(2)))
struct MultiNodeTests {
    static let nodes = 3

    /// Three nodes on a fresh schema (keys re-read every 0.2 s, new keys signing after 1 s), the
    /// emulator in this process, one HTTP client; everything stopped afterwards.
    static func withNodes(
        settings extra: [String: String] = [:],
        _ body: @escaping @Sendable (Stack, [ChildServer], Cluster) async throws -> Void
    ) async throws {
        let binary = try #require(LatchkeyBinary.url, "build the latchkey executable (swift build) first")
        let base = try #require(try TestPostgres.url())
        let text = try #require(ProcessInfo.processInfo.environment["LATCHKEY_TEST_POSTGRES_URL"])
        try await TestPostgres.withSchema(base) { scoped in
            let options = (scoped.options ?? "").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let database = text + (text.contains("?") ? "&" : "?") + "options=" + options
            let inspector = try PostgresStore(
                url: scoped, poolSize: 1, timeout: TestPostgres.timeout, logger: TestPostgres.quiet)
            // Limited Login's `iat` and `exp` are checked against the real clock in the children.
            try await Stack.run(clock: TestClock(Date())) { (stack: Stack) async throws in
                let settings = extra.merging([
                    "LATCHKEY_KEY_REFRESH_INTERVAL": "0.2", "LATCHKEY_KEY_ACTIVATION_DELAY": "1",
                    "LATCHKEY_LIMIT_REFRESH_PER_SESSION": "off",
                    "LATCHKEY_FACEBOOK_DIALOG_URL": "\(stack.emulatorURL)/dialog/oauth",
                    "LATCHKEY_OAUTH_CLIENTS": "\(Demo.clientID)=\(Demo.appRedirect)",
                ]) { given, _ in given }
                let servers = ChildServers(
                    binary: binary, database: database, emulator: stack.emulatorURL, extra: settings)
                defer { servers.killAll() }
                var started: [ChildServer] = []
                for _ in 0..<nodes { started.append(try await servers.start()) }
                let client = HTTPClient(eventLoopGroupProvider: .singleton)
                let cluster = Cluster(
                    client: client, binary: binary, environment: servers.environment, inspector: inspector)
                do {
                    try await body(stack, started, cluster)
                } catch {
                    try? await client.shutdown()
                    throw error
                }
                try await client.shutdown()
            }
            await inspector.close()
        }
    }

    /// What a test needs beside the nodes.
    struct Cluster: Sendable {
        let client: HTTPClient
        let binary: URL
        /// What every node was started with, for a CLI command against their database.
        let environment: [String: String]
        /// A connection to the nodes' schema, to count rows.
        let inspector: PostgresStore

        func call(
            _ node: ChildServer, _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, bearer: String? = nil
        ) async throws -> (status: Int, body: JSONValue) {
            var request = HTTPClientRequest(url: node.url + path)
            request.method = method
            if let json {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: json.encoded()))
            }
            if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
            let response = try await client.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            let body = (try? JSONValue.decode(Data(buffer: bytes))) ?? .null
            return (Int(response.status.code), body)
        }

        func refresh(_ node: ChildServer, _ token: String) async throws -> (status: Int, body: JSONValue) {
            try await call(
                node, .POST, "/v1/oauth/token", json: ["grant_type": "refresh_token", "refresh_token": .string(token)])
        }

        /// Latchkey's error code in an answer (both error shapes).
        static func code(_ body: JSONValue) -> String? {
            body["error"]?["code"]?.stringValue ?? body["error_code"]?.stringValue
        }
    }

    @Test(
        "concurrent first logins of one person on different nodes make one user; rotation, retry, a superseded refresh, replay and logout agree across nodes"
    )
    func actAsOne() async throws {
        // The widest retry window, so that "moments after" below holds however slow the machine.
        try await Self.withNodes(settings: ["LATCHKEY_REFRESH_RETRY_WINDOW": "300"]) { stack, nodes, cluster in
            // One person signing in on every node at once, twice each: one user.
            let token = try await stack.facebookToken()
            let answers = try await withThrowingTaskGroup(of: (Int, JSONValue).self) { group in
                for index in 0..<(2 * nodes.count) {
                    group.addTask {
                        try await cluster.call(
                            nodes[index % nodes.count], .POST, "/v1/auth/facebook",
                            json: ["accessToken": .string(token)])
                    }
                }
                return try await group.reduce(into: [(Int, JSONValue)]()) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.0 == 200 }, "\(answers.map(\.0))")
            #expect(Set(answers.compactMap { $0.1["user"]?["id"]?.stringValue }).count == 1)
            #expect(try await cluster.inspector.integer("SELECT count(*) FROM users") == 1)
            #expect(try await cluster.inspector.integer("SELECT count(*) FROM identities") == 1)

            // Rotated on node 0; the lost-answer retry on node 1 gets the same successor; used on
            // node 2; the old token again on node 0 moments later is a concurrent refresh that lost
            // the race: refused, and the session lives on every node.
            let first = try #require(answers[0].1["session"]?["refresh_token"]?.stringValue)
            let rotated = try await cluster.refresh(nodes[0], first)
            let second = try #require(rotated.body["refresh_token"]?.stringValue)
            let retried = try await cluster.refresh(nodes[1], first)
            #expect(retried.status == 200 && retried.body["refresh_token"]?.stringValue == second)
            let third = try await cluster.refresh(nodes[2], second)
            let access = try #require(third.body["access_token"]?.stringValue)
            let thirdToken = try #require(third.body["refresh_token"]?.stringValue)
            #expect(try await cluster.call(nodes[1], .GET, "/v1/users/me", bearer: access).status == 200)
            let superseded = try await cluster.refresh(nodes[0], first)
            #expect(Cluster.code(superseded.body) == "refresh_token_superseded", "\(superseded)")
            let fourth = try await cluster.refresh(nodes[1], thirdToken)
            #expect(fourth.status == 200, "\(fourth)")
            // The second token again, its successor used too: superseded as well, nothing ended.
            #expect(Cluster.code(try await cluster.refresh(nodes[2], second).body) == "refresh_token_superseded")
            let live = try #require(fourth.body["access_token"]?.stringValue)
            for node in nodes {
                #expect(try await cluster.call(node, .GET, "/v1/users/me", bearer: live).status == 200)
            }

            // A Limited Login id token spent on one node is refused on another.
            let idToken = try await stack.idToken()
            let limited: JSONValue = ["idToken": .string(idToken), "nonce": "raw-nonce-123"]
            #expect(try await cluster.call(nodes[0], .POST, "/v1/auth/facebook", json: limited).status == 200)
            let replayed = try await cluster.call(nodes[1], .POST, "/v1/auth/facebook", json: limited)
            #expect(Cluster.code(replayed.body) == "id_token_replayed", "\(replayed)")

            // A logout on one node ends the session on all of them at once.
            let session = try await cluster.call(
                nodes[2], .POST, "/v1/auth/facebook", json: ["accessToken": .string(token)])
            let bearer = try #require(session.body["session"]?["access_token"]?.stringValue)
            for node in nodes {
                #expect(try await cluster.call(node, .GET, "/v1/users/me", bearer: bearer).status == 200)
            }
            #expect(try await cluster.call(nodes[1], .POST, "/v1/auth/logout", json: [:], bearer: bearer).status == 204)
            for node in nodes {
                #expect(
                    Cluster.code(try await cluster.call(node, .GET, "/v1/users/me", bearer: bearer).body)
                        == "session_revoked")
            }
        }
    }

    @Test(
        "a replay after the window revokes the session on every node; a refresh token never saved is retried late on any node"
    )
    func replayAfterWindow() async throws {
        try await Self.withNodes(settings: ["LATCHKEY_REFRESH_RETRY_WINDOW": "1"]) { stack, nodes, cluster in
            let token = try await stack.facebookToken()
            func signIn() async throws -> String {
                let answer = try await cluster.call(
                    nodes[0], .POST, "/v1/auth/facebook", json: ["accessToken": .string(token)])
                return try #require(answer.body["session"]?["refresh_token"]?.stringValue)
            }
            // Session A: rotated once; the app never saved the answer.
            let first = try await signIn()
            let second = try #require(try await cluster.refresh(nodes[0], first).body["refresh_token"]?.stringValue)
            // Session B, after A: rotated twice, so its first successor is spent. Replayed, it is
            // refused without ending anything until the window has passed (waited for on the
            // servers' clocks, not timed), then it revokes B on every node.
            let b1 = try await signIn()
            let b2 = try #require(try await cluster.refresh(nodes[0], b1).body["refresh_token"]?.stringValue)
            let b3 = try await cluster.refresh(nodes[1], b2)
            let bAccess = try #require(b3.body["access_token"]?.stringValue)
            var outcome = try await cluster.refresh(nodes[1], b1)
            let deadline = ContinuousClock.now + .seconds(20)
            while Cluster.code(outcome.body) == "refresh_token_superseded", ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                outcome = try await cluster.refresh(nodes[1], b1)
            }
            #expect(Cluster.code(outcome.body) == "refresh_token_reused", "\(outcome)")
            for node in nodes {
                #expect(
                    Cluster.code(try await cluster.call(node, .GET, "/v1/users/me", bearer: bAccess).body)
                        == "session_revoked")
            }
            // A's window has passed too: its spent token, never saved, still gets the same
            // successor on any node.
            for node in nodes {
                let retried = try await cluster.refresh(node, first)
                #expect(retried.status == 200 && retried.body["refresh_token"]?.stringValue == second, "\(retried)")
            }
            let access = try #require(try await cluster.refresh(nodes[2], second).body["access_token"]?.stringValue)
            #expect(try await cluster.call(nodes[1], .GET, "/v1/users/me", bearer: access).status == 200)
        }
    }

    @Test("an Easy Login started on one node comes back from Facebook to a second and is redeemed on a third")
    func easyLoginAcrossNodes() async throws {
        try await Self.withNodes { stack, nodes, cluster in
            let request = AuthorizeRequest()
            let dialog = try #require(try await TestBrowser.get(request.url(base: nodes[0].url)).location)
            try #require(dialog.hasPrefix(stack.emulatorURL), "\(dialog)")
            // Facebook sends the browser to the public URL; the load balancer picks another node.
            let back = try #require(try await TestBrowser.get(dialog + "&emulator_user=alice").location)
            let path = try #require(back.range(of: "/v1/oauth/facebook/callback"), "\(back)")
            let answer = try #require(try await TestBrowser.get(nodes[1].url + back[path.lowerBound...]).location)
            #expect(answer.hasPrefix(request.redirectURI + "?"), "\(answer)")
            let code = try #require(TestBrowser.query(answer)["code"], "\(answer)")
            // The state's use is recorded in the database: a replay on a third node is refused.
            let replayed = try await TestBrowser.get(nodes[2].url + back[path.lowerBound...])
            #expect(replayed.location == nil, "\(replayed)")
            var token = HTTPClientRequest(url: nodes[2].url + "/v1/oauth/token")
            token.method = .POST
            token.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            token.body = .bytes(ByteBuffer(string: FormEncoding.encode(request.tokenForm(code: code))))
            let issued = try await CrashRecoveryTests.send(token, cluster.client)
            let access = try #require(issued.body?["access_token"]?.stringValue, "\(issued)")
            for node in nodes {
                #expect(try await cluster.call(node, .GET, "/v1/users/me", bearer: access).status == 200)
            }
            // The code is spent everywhere: a replay on another node is refused and ends the session.
            var replay = token
            replay.url = nodes[0].url + "/v1/oauth/token"
            #expect(
                try await CrashRecoveryTests.send(replay, cluster.client).body?["error_code"]
                    == "authorization_code_reused")
            #expect(
                Cluster.code(try await cluster.call(nodes[1], .GET, "/v1/users/me", bearer: access).body)
                    == "session_revoked")
        }
    }

    @Test(
        "a key rotated with the CLI is published by every node, then signs on every node, and tokens verify everywhere")
    func keyRotationReachesEveryNode() async throws {
        try await Self.withNodes { stack, nodes, cluster in
            let token = try await stack.facebookToken()
            let before = try #require(
                try await cluster.call(nodes[0], .POST, "/v1/auth/facebook", json: ["accessToken": .string(token)])
                    .body["session"]?["access_token"]?.stringValue)
            let rotate = try await ChildProcess.run(
                cluster.binary, ["keys", "rotate"], environment: cluster.environment)
            try #require(rotate.status == 0, "\(rotate.output)")
            // The newest stored key, not the one that signed `before`.
            let kid = try #require(try await cluster.inspector.signingKeys().first?.kid)
            try #require(try kid != KeyRotationTests.kid(before))

            // Each node publishes the new key at its next refresh (0.2 s); waited for, not timed.
            for node in nodes {
                try await eventually(
                    "node \(node.url) publishes \(kid)", within: .seconds(20), every: .milliseconds(50)
                ) {
                    let jwks = try await cluster.call(node, .GET, "/.well-known/jwks.json").body
                    return jwks["keys"]?.arrayValue?.contains { $0["kid"]?.stringValue == kid } == true
                }
            }
            // Once it is a second old, every node signs with it.
            for node in nodes {
                try await eventually(
                    "node \(node.url) signs with \(kid)", within: .seconds(20), every: .milliseconds(50)
                ) {
                    let answer = try await cluster.call(
                        node, .POST, "/v1/auth/facebook", json: ["accessToken": .string(token)])
                    guard let access = answer.body["session"]?["access_token"]?.stringValue else { return false }
                    guard try KeyRotationTests.kid(access) == kid else { return false }
                    for other in nodes {
                        #expect(try await cluster.call(other, .GET, "/v1/users/me", bearer: access).status == 200)
                    }
                    return true
                }
            }
            for node in nodes {
                #expect(try await cluster.call(node, .GET, "/v1/users/me", bearer: before).status == 200)
            }
        }
    }
}
