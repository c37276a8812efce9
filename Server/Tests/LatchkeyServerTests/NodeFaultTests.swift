import AsyncHTTPClient
import Foundation
import LatchkeyAPI
import LatchkeyPostgres
import NIOCore
import Synchronization
import Testing

/// Three real `latchkey serve` processes on a PostgreSQL cluster of the test's own, under a
/// sign-in load spread over them, while the database crashes and comes back, or while a node is
/// killed. Nothing answered 200 may be lost, nobody may get two users, and while the database is
/// gone every request gets a clean 503 with `Retry-After` within the configured timeout.
///
/// They run in a pass of their own (`scripts/test` sets `LATCHKEY_TEST_NODE_FAULTS=1`): beside
/// the rest of the suite, their load on two cores starved other tests past their timeouts.
@Suite(
    "Many nodes under faults",
    .enabled(
        if: ProcessInfo.processInfo.environment["LATCHKEY_TEST_NODE_FAULTS"] == "1",
        "runs in its own pass: LATCHKEY_TEST_NODE_FAULTS=1 swift test --filter NodeFaultTests (scripts/test does)"),
    .timeLimit(.minutes(3)))
struct NodeFaultTests {
    static let nodes = 3
    /// `LATCHKEY_DATABASE_TIMEOUT` of the nodes, in seconds.
    static let databaseTimeout = 2
    /// How late a 503 may come beyond the timeout (a loaded machine, the answer's own way back)
    /// before it counts as a hang. A bound on liveness, not a measurement.
    static let lateness: Duration = .seconds(8)

    @Test(
        "PostgreSQL crashes mid-load: only clean 503s with Retry-After within the timeout; back up, the nodes recover by themselves; every 200 kept, nobody twice"
    )
    func databaseCrash() async throws {
        try await Self.withFaultNodes { nodes, fleet, database in
            let replies = try await SpreadLoad.run(people: fleet.people, nodes: nodes, client: fleet.client) { load in
                try await load.waitUntil("120 sign-ins answered") { $0.ok >= 120 }
                try await database.down()
                let downAt = ContinuousClock.now
                try await load.waitUntil("10 requests sent after the crash answered 503 on every node") {
                    $0.everyNode(nodes.count, answered: 503, atLeast: 10, sentAfter: downAt)
                }
                try await database.up()
                let upAt = ContinuousClock.now
                // Nothing restarts the nodes: they reconnect by themselves.
                try await load.waitUntil("10 sign-ins sent after the restart answered 200 on every node") {
                    $0.everyNode(nodes.count, answered: 200, atLeast: 10, sentAfter: upAt)
                }
            }
            var wrong: [String] = []
            for reply in replies {
                switch reply.status {
                case 200: break
                case 503:
                    if reply.retryAfter == nil { wrong.append("503 without Retry-After: \(reply)") }
                    if reply.code != "unavailable" { wrong.append("503 \(reply.code ?? "no code"): \(reply)") }
                    if reply.elapsed > .seconds(Self.databaseTimeout) + Self.lateness {
                        wrong.append("late 503: \(reply)")
                    }
                default: wrong.append("\(reply)")
                }
            }
            CrashRecoveryTests.expectNone(wrong, "answers while PostgreSQL crashed")
            if !wrong.isEmpty { for node in nodes { print("node \(node.url):\n\(node.printed.suffix(6000))") } }
            for node in nodes { #expect(node.isRunning, "node \(node.url) ended") }
            try await Self.expectKept(replies, on: nodes, fleet: fleet)
            let slowest = replies.filter { $0.status == 503 }.map(\.elapsed).max() ?? .zero
            print(
                "NodeFaultTests.databaseCrash: \(replies.count { $0.status == 200 }) answered 200, "
                    + "\(replies.count { $0.status == 503 }) answered 503 (slowest \(slowest)), 0 otherwise")
        }
    }

    @Test(
        "a node killed with SIGKILL mid-load loses nothing it answered 200; the others carry on; a new node serves every session"
    )
    func nodeKilled() async throws {
        try await Self.withFaultNodes { nodes, fleet, _ in
            let replies = try await SpreadLoad.run(people: fleet.people, nodes: nodes, client: fleet.client) { load in
                try await load.waitUntil("120 sign-ins answered") { $0.ok >= 120 }
                load.drop(node: 1)
                nodes[1].kill()
                let killedAt = ContinuousClock.now
                try await load.waitUntil("120 more sign-ins answered by the others") { state in
                    state.replies.count { $0.status == 200 && $0.started > killedAt } >= 120
                }
            }
            // Only requests to the killed node may go unanswered; every answer is a 200.
            let answered = replies.filter { $0.status != nil }
            CrashRecoveryTests.expectNone(
                replies.filter { $0.status == nil ? $0.node != 1 : $0.status != 200 }.map { "\($0)" },
                "answers around the kill")
            let byKilled = answered.count { $0.node == 1 }
            #expect(byKilled > 0, "the killed node answered nothing before it died")
            // A node started afterwards, as a replacement, serves what the dead one answered.
            let replacement = try await fleet.servers.start()
            try await Self.expectKept(replies, on: [nodes[0], nodes[2], replacement], fleet: fleet)
            print(
                "NodeFaultTests.nodeKilled: \(answered.count) answered 200 (\(byKilled) by the "
                    + "killed node), \(replies.count - answered.count) cut off by the kill")
        }
    }

    // MARK: The fleet

    /// What a test has beside its nodes.
    struct Fleet: Sendable {
        let people: People
        let client: HTTPClient
        let servers: ChildServers
        /// The nodes' database, to count rows (after the database is back).
        let inspector: PostgresStore
    }

    /// Three nodes on a cluster of the test's own (the shared one must not crash under other
    /// tests), the emulator with `People` minted in this process; everything stopped afterwards.
    static func withFaultNodes(
        _ body: @escaping @Sendable ([ChildServer], Fleet, TestCluster) async throws -> Void
    ) async throws {
        let binary = try #require(LatchkeyBinary.url, "build the latchkey executable (swift build) first")
        let database = try await TestCluster.start()
        do {
            try await withNodes(on: database, binary: binary, body)
        } catch {
            await database.stop()
            throw error
        }
        await database.stop()
    }

    private static func withNodes(
        on database: TestCluster, binary: URL,
        _ body: @escaping @Sendable ([ChildServer], Fleet, TestCluster) async throws -> Void
    ) async throws {
        let inspector = try PostgresStore(
            url: database.url, poolSize: 1, timeout: TestPostgres.timeout, logger: TestPostgres.quiet)
        do {
            try await withNodes(on: database, binary: binary, inspector: inspector, body)
        } catch {
            await inspector.close()
            throw error
        }
        await inspector.close()
    }

    private static func withNodes(
        on database: TestCluster, binary: URL, inspector: PostgresStore,
        _ body: @escaping @Sendable ([ChildServer], Fleet, TestCluster) async throws -> Void
    ) async throws {
        // Limited Login's `iat` and `exp` are checked against the real clock in the children.
        try await Stack.run(clock: TestClock(Date())) { (stack: Stack) async throws in
            let people = try await People.mint(stack)
            let servers = ChildServers(
                binary: binary, database: PostgresStoreTests.text(database.url), emulator: stack.emulatorURL,
                extra: [
                    "LATCHKEY_DATABASE_TIMEOUT": "\(databaseTimeout)", "LATCHKEY_LIMIT_REFRESH_PER_SESSION": "off",
                ])
            defer { servers.killAll() }
            var started: [ChildServer] = []
            for _ in 0..<nodes { started.append(try await servers.start()) }
            try await CrashRecoveryTests.withLoadClient { client in
                try await body(
                    started, Fleet(people: people, client: client, servers: servers, inspector: inspector), database)
            }
        }
    }

    /// Every sign-in answered 200 still works on the nodes given (its access token on one, its
    /// refresh token on the next, round robin); each person has one user, the one every answer
    /// named; the database holds no user without an identity and one identity per person.
    static func expectKept(_ replies: [SpreadLoad.Reply], on nodes: [ChildServer], fleet: Fleet) async throws {
        let answers = replies.compactMap(\.answer)
        var userOf: [Int: String] = [:]
        var wrong: [String] = []
        for answer in answers {
            if let known = userOf[answer.person], known != answer.userID {
                wrong.append("person \(answer.person) answered as \(known) and as \(answer.userID)")
            }
            userOf[answer.person] = answer.userID
        }
        let indexed = Array(answers.enumerated())
        let failures = try await CrashRecoveryTests.concurrently(indexed) { (index, answer) -> String? in
            let me = try await CrashRecoveryTests.send(
                CrashRecoveryTests.get(nodes[index % nodes.count].url + "/v1/users/me", bearer: answer.accessToken),
                fleet.client)
            guard me.status == 200, me.body?["id"]?.stringValue == answer.userID else {
                return "access token of \(answer.userID): \(me.status)"
            }
            let rotated = try await CrashRecoveryTests.send(
                CrashRecoveryTests.refresh(nodes[(index + 1) % nodes.count].url, answer.refreshToken), fleet.client)
            return rotated.status == 200 ? nil : "refresh token of \(answer.userID): \(rotated.status)"
        }
        wrong += failures.compactMap { $0 }
        let stored = try await fleet.inspector.pairs("SELECT subject, user_id FROM identities")
        let userOfSubject = Dictionary(stored, uniquingKeysWith: { first, _ in first })
        for (person, user) in userOf where userOfSubject[fleet.people.subjects[person]] != user {
            wrong.append(
                "\(fleet.people.keys[person]): stored user \(userOfSubject[fleet.people.subjects[person]] ?? "none")")
        }
        let orphans = try await fleet.inspector.integer(
            "SELECT count(*) FROM users WHERE id NOT IN (SELECT user_id FROM identities)")
        if orphans != 0 { wrong.append("\(orphans) users without an identity (a half-written sign-in)") }
        let users = try await fleet.inspector.integer("SELECT count(*) FROM users")
        if users != stored.count { wrong.append("\(users) users for \(stored.count) identities") }
        CrashRecoveryTests.expectNone(wrong, "what was answered 200")
        #expect(answers.count > 0)
    }
}

/// Sign-ins spread round robin over nodes by `CrashRecoveryTests.jobs` workers until stopped,
/// every reply recorded: status, `Retry-After`, error code, how long it took.
final class SpreadLoad: Sendable {
    /// One request's outcome.
    struct Reply: Sendable, CustomStringConvertible {
        let person: Int
        let node: Int
        /// `nil` when no answer came (the node was killed).
        let status: Int?
        let retryAfter: String?
        let code: String?
        let answer: CrashRecoveryTests.Answer?
        let started: ContinuousClock.Instant
        let elapsed: Duration

        var description: String {
            "person \(person) on node \(node): \(status.map(String.init) ?? "no answer") \(code ?? "") after \(elapsed)"
        }
    }

    struct State: Sendable {
        var next = 0
        var stopped = false
        var dropped: Set<Int> = []
        var replies: [Reply] = []
        var ok: Int { replies.count { $0.status == 200 } }

        /// Whether each of the first `nodes` nodes answered `status` to at least `count` requests
        /// sent after `instant`.
        func everyNode(
            _ nodes: Int, answered status: Int, atLeast count: Int, sentAfter instant: ContinuousClock.Instant
        )
            -> Bool
        {
            (0..<nodes).allSatisfy { node in
                replies.count { $0.node == node && $0.status == status && $0.started > instant } >= count
            }
        }
    }

    private let people: People
    private let nodes: [ChildServer]
    private let client: HTTPClient
    private let state = Mutex(State())

    init(people: People, nodes: [ChildServer], client: HTTPClient) {
        self.people = people
        self.nodes = nodes
        self.client = client
    }

    var replies: [Reply] { state.withLock { $0.replies } }

    /// Sends no more requests to `node` (a load balancer taking a dead node out).
    func drop(node: Int) { state.withLock { _ = $0.dropped.insert(node) } }

    /// Ends the load; requests under way finish first.
    func stop() { state.withLock { $0.stopped = true } }

    /// Runs a load while `body` does its part, and returns every reply once the load has ended
    /// (on every path: a failing `body` stops it too).
    static func run(
        people: People, nodes: [ChildServer], client: HTTPClient, _ body: (SpreadLoad) async throws -> Void
    ) async throws -> [Reply] {
        let load = SpreadLoad(people: people, nodes: nodes, client: client)
        let running = Task { await load.run() }
        do {
            try await body(load)
        } catch {
            load.stop()
            await running.value
            throw error
        }
        load.stop()
        await running.value
        return load.replies
    }

    /// Waits until `condition` holds for the replies so far, polling, for a minute at most: a
    /// load that stops progressing fails the test instead of hanging it. Waiting, never timing.
    func waitUntil(_ what: String, _ condition: (State) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !state.withLock({ condition($0) }) {
            guard ContinuousClock.now < deadline else {
                throw LoadStalled(what: what, replies: replies.suffix(5).map(\.description))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Runs the workers until `stop()`.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<CrashRecoveryTests.jobs {
                group.addTask {
                    while let (job, node) = self.nextJob() { await self.send(job: job, node: node) }
                }
            }
        }
    }

    private func nextJob() -> (Int, Int)? {
        state.withLock { state in
            guard !state.stopped else { return nil }
            var node = state.next % nodes.count
            while state.dropped.contains(node) { node = (node + 1) % nodes.count }
            defer { state.next += 1 }
            return (state.next, node)
        }
    }

    /// One sign-in: classic mostly, Limited Login every third job while the person has id tokens.
    private func send(job: Int, node: Int) async {
        let person = job % CrashRecoveryTests.population
        let idToken = job % 3 == 2 ? people.idToken(person) : nil
        var request = HTTPClientRequest(url: nodes[node].url + "/v1/auth/facebook")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let body: JSONValue =
            if let idToken { ["idToken": .string(idToken), "nonce": .string(CrashRecoveryTests.nonce)] } else {
                ["accessToken": .string(people.accessTokens[person])]
            }
        request.body = .bytes(ByteBuffer(bytes: body.encoded()))
        let started = ContinuousClock.now
        var status: Int?
        var retryAfter: String?
        var json: JSONValue?
        do {
            let response = try await client.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            status = Int(response.status.code)
            retryAfter = response.headers["Retry-After"].first
            json = try? JSONValue.decode(Data(buffer: bytes))
        } catch {
            // No answer: only a killed node does that, which the test checks.
        }
        var answer: CrashRecoveryTests.Answer?
        if status == 200, let json, let userID = json["user"]?["id"]?.stringValue,
            let access = json["session"]?["access_token"]?.stringValue,
            let refresh = json["session"]?["refresh_token"]?.stringValue
        {
            answer = CrashRecoveryTests.Answer(
                person: person, userID: userID, isNewUser: json["isNewUser"]?.boolValue ?? false,
                limited: idToken != nil, accessToken: access, refreshToken: refresh)
        }
        let reply = Reply(
            person: person, node: node, status: status, retryAfter: retryAfter,
            code: json?["error"]?["code"]?.stringValue ?? json?["error_code"]?.stringValue, answer: answer,
            started: started, elapsed: ContinuousClock.now - started)
        state.withLock { $0.replies.append(reply) }
    }
}

struct LoadStalled: Error, CustomStringConvertible {
    let what: String
    let replies: [String]
    var description: String { "waited a minute for \(what); the last replies: \(replies.joined(separator: "; "))" }
}
