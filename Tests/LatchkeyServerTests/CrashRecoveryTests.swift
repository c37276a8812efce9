import AsyncHTTPClient
import FacebookEmulator
import Foundation
import LatchkeyAPI
import NIOCore
import Synchronization
import Testing

@testable import LatchkeySQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// "Nothing lost": the real `latchkey serve` binary on an SQLite file, under a concurrent sign-in
/// load, killed with SIGKILL while requests are in flight, then started again on the same file.
/// Everything it answered 200 must still be there, and nothing may be there twice.
@Suite(
    "Crash safety: kill -9 under sign-in load",
    .enabled(if: LatchkeyBinary.url != nil || TestEnvironment.isCI, "the latchkey binary is not built"))
struct CrashRecoveryTests {
    /// People who sign in; each signs in several times, often concurrently with themselves.
    static let people = (0..<40).map { "crash\($0)" }
    static let rounds = 3
    /// Sign-ins answered 200 in a round before the kill; the load keeps running past it, so the
    /// kill lands with requests in flight.
    static let killAfter = 120
    static let workers = 12

    /// One sign-in answered 200 before a kill.
    struct Answered: Sendable {
        let person: String
        let userID: String
        let refreshToken: String
    }

    @Test("after each SIGKILL the database is intact, every 200 kept its user and refresh token, nobody has two users")
    func killNine() async throws {
        let binary = try #require(LatchkeyBinary.url, "build the latchkey executable (swift build) first")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-crash-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("latchkey.sqlite").path
        try await Stack.run(emulatorSeed: { seed in
            seed.users += Self.people.map { EmulatorSeed.SeededPerson(person: Person(key: $0, name: "Crash \($0)")) }
        }) { (stack: Stack) async throws in
            var tokens: [String: String] = [:]
            for person in Self.people { tokens[person] = try await stack.facebookToken(person) }
            let client = HTTPClient.shared
            var answered: [Answered] = []
            var userOf: [String: String] = [:]
            for round in 1...Self.rounds {
                let server = try await ChildServer.start(
                    binary: binary, database: database, emulator: stack.emulatorURL)
                // Before the load: what the earlier rounds answered is all still there.
                try await Self.verify(answered, server: server, client: client, tokens: tokens, userOf: &userOf)
                let got = try await Self.load(server, client: client, tokens: tokens)
                #expect(got.count >= Self.killAfter, "round \(round)")
                answered += got
            }
            let server = try await ChildServer.start(binary: binary, database: database, emulator: stack.emulatorURL)
            try await Self.verify(answered, server: server, client: client, tokens: tokens, userOf: &userOf)
            server.kill()
            try await Self.checkFile(database, people: Set(answered.map(\.person)))
        }
    }

    /// Runs the load until `killAfter` sign-ins were answered 200, kills the server with requests
    /// in flight, and returns every 200 (some arrive after the count was reached, before the kill).
    static func load(
        _ server: ChildServer, client: HTTPClient, tokens: [String: String]
    ) async throws -> [Answered] {
        let state = LoadState()
        let signal = AsyncStream<Void>.makeStream()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var index = worker
                    while !state.killed.withLock({ $0 }) {
                        // Workers walk the people at different offsets, so the same person often
                        // signs in from two workers at once, new and existing users interleaved.
                        let person = people[index % people.count]
                        index += 5
                        guard
                            let answer = try? await signIn(
                                server.url, token: tokens[person] ?? "", person: person, client: client)
                        else { continue }
                        let count = state.answers.withLock { list in
                            list.append(answer)
                            return list.count
                        }
                        let killNow = state.killed.withLock { killed in
                            defer { if count >= killAfter { killed = true } }
                            return count >= killAfter && !killed
                        }
                        if killNow {
                            server.kill()
                            signal.continuation.yield()
                        }
                    }
                }
            }
            // Once killed, what is still in flight is cancelled: a request that found the port
            // closed would otherwise wait out its deadline while the client retries the connection.
            for await _ in signal.stream { break }
            group.cancelAll()
        }
        return state.answers.withLock { $0 }
    }

    /// What the load's workers share.
    final class LoadState: Sendable {
        let answers = Mutex<[Answered]>([])
        let killed = Mutex(false)
    }

    static func signIn(_ base: String, token: String, person: String, client: HTTPClient) async throws -> Answered? {
        var request = HTTPClientRequest(url: base + "/v1/auth/facebook")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: JSONValue.object(["accessToken": .string(token)]).encoded()))
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else {
            // Anything but a 200 during the load must still be a typed answer, never a 500.
            #expect(response.status.code < 500, "\(response.status)")
            return nil
        }
        let json = try JSONValue.decode(Data(buffer: body))
        guard let userID = json["user"]?["id"]?.stringValue,
            let refresh = json["session"]?["refresh_token"]?.stringValue
        else { return nil }
        return Answered(person: person, userID: userID, refreshToken: refresh)
    }

    /// Each earlier 200: the person's next sign-in finds the same user, and its refresh token (not
    /// used before) rotates to a session of that user.
    static func verify(
        _ answered: [Answered], server: ChildServer, client: HTTPClient, tokens: [String: String],
        userOf: inout [String: String]
    ) async throws {
        for answer in answered {
            if let known = userOf[answer.person] {
                #expect(known == answer.userID, "\(answer.person) has two users")
            }
            userOf[answer.person] = answer.userID
        }
        for answer in answered where checked.withLock({ $0.insert(answer.refreshToken).inserted }) {
            var request = HTTPClientRequest(url: server.url + "/v1/oauth/token")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(
                ByteBuffer(
                    string: FormEncoding.encode([
                        ("grant_type", "refresh_token"), ("refresh_token", answer.refreshToken),
                    ])))
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = try JSONValue.decode(Data(buffer: try await response.body.collect(upTo: 1 << 20)))
            #expect(response.status == .ok, "refresh of an answered sign-in: \(body)")
            guard let access = body["access_token"]?.stringValue else { continue }
            var me = HTTPClientRequest(url: server.url + "/v1/users/me")
            me.headers.add(name: "Authorization", value: "Bearer \(access)")
            let user = try JSONValue.decode(
                Data(buffer: try await client.execute(me, timeout: .seconds(30)).body.collect(upTo: 1 << 20)))
            #expect(user["id"]?.stringValue == answer.userID)
        }
        for person in Set(answered.map(\.person)) {
            let again = try await signIn(server.url, token: tokens[person] ?? "", person: person, client: client)
            #expect(again?.userID == userOf[person], "\(person) signed in as another user after the crash")
        }
    }

    /// Refresh tokens already spent by an earlier check (each may be spent once).
    static let checked = Mutex<Set<String>>([])

    /// With the server stopped: `PRAGMA integrity_check`, one identity per person, no user without
    /// an identity (a half-written sign-in), no duplicate user.
    static func checkFile(_ path: String, people: Set<String>) async throws {
        let database = try await SQLiteDatabase.open(path: path)
        let (integrity, identities, users, orphans) = try await database.run { state in
            (
                try state.query("PRAGMA integrity_check").first?.column("integrity_check")?.string,
                try state.query("SELECT COUNT(*) AS n FROM identities").first?.column("n")?.double,
                try state.query("SELECT COUNT(*) AS n FROM users").first?.column("n")?.double,
                try state.query(
                    "SELECT COUNT(*) AS n FROM users WHERE id NOT IN (SELECT user_id FROM identities)"
                ).first?.column("n")?.double
            )
        }
        try await database.close()
        #expect(integrity == "ok")
        #expect(identities.map(Int.init) == people.count)
        #expect(users.map(Int.init) == people.count)
        #expect(orphans == 0)
    }
}

/// The `latchkey` executable `swift test` built next to the test bundle.
enum LatchkeyBinary {
    static let url: URL? = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL,
        ].map { $0.appendingPathComponent("latchkey") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()
}

/// `latchkey serve` as a child process on a free port.
final class ChildServer: Sendable {
    let process: Process
    let url: String

    private init(process: Process, url: String) {
        self.process = process
        self.url = url
    }

    /// Starts the server and waits for the line naming its port (bounded: a server that never
    /// starts fails the test instead of hanging it).
    static func start(binary: URL, database: String, emulator: String) async throws -> ChildServer {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve"]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") }
        for (name, value) in [
            ("LATCHKEY_HOST", "127.0.0.1"), ("LATCHKEY_PORT", "0"), ("LATCHKEY_DATABASE_URL", database),
            ("LATCHKEY_FACEBOOK_APP_ID", Demo.appID), ("LATCHKEY_FACEBOOK_APP_SECRET", Demo.secret),
            ("LATCHKEY_FACEBOOK_GRAPH_URL", "\(emulator)/v21.0"),
            ("LATCHKEY_FACEBOOK_JWKS_URL", "\(emulator)/.well-known/oauth/openid/jwks/"),
            ("LATCHKEY_KEY_ENCRYPTION_KEY", Self.kek), ("LATCHKEY_FACEBOOK_STARTUP_CHECK", "off"),
            // One test client is one address signing in as many people: only per-address limits off.
            ("LATCHKEY_LIMIT_SIGN_IN_PER_ADDRESS", "off"), ("LATCHKEY_LIMIT_SIGN_IN_PER_IDENTITY", "off"),
            ("LATCHKEY_LIMIT_TOKEN_PER_ADDRESS", "off"),
        ] {
            environment[name] = value
        }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try await TestLock.fileDescriptors.withLock { try process.run() }
        let port = try await withThrowingTaskGroup(of: Int?.self) { group in
            group.addTask { await Self.port(from: output.fileHandleForReading) }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        let server = ChildServer(process: process, url: "http://127.0.0.1:\(port ?? 0)")
        guard port != nil else {
            server.kill()
            throw ChildServerError.didNotStart
        }
        return server
    }

    /// One key-encryption key for every start, so the restarted server opens the sealed keys.
    static let kek = Data((0..<32).map { UInt8($0) }).base64EncodedString()

    /// Reads stdout off the cooperative pool until the banner, then keeps draining it.
    private static func port(from handle: FileHandle) async -> Int? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var text = ""
                var answered = false
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    guard !answered else { continue }
                    text += String(decoding: data, as: UTF8.self)
                    if let range = text.range(of: "listening on http://127.0.0.1:"),
                        let line = text[range.upperBound...].split(whereSeparator: \.isNewline).first,
                        let port = Int(line)
                    {
                        answered = true
                        continuation.resume(returning: port)
                    }
                }
                if !answered { continuation.resume(returning: nil) }
            }
        }
    }

    /// SIGKILL: no shutdown handler runs, exactly like a crash or an OOM kill.
    func kill() {
        guard process.isRunning else { return }
        #if canImport(Glibc)
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        #else
        _ = Darwin.kill(process.processIdentifier, SIGKILL)
        #endif
        process.waitUntilExit()
    }
}

enum ChildServerError: Error { case didNotStart }
