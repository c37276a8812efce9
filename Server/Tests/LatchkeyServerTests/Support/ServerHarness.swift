import AsyncHTTPClient
import Crypto
import FacebookEmulator
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeySQLite
import LatchkeyServer
import LatchkeyShared
import Logging
import NIOCore
import Synchronization
import Testing

/// A clock both the emulator and the server read, moved by tests instead of sleeping.
final class TestClock: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

enum Demo {
    static let appID = "100000000000001"
    static let secret = "demo-app-secret-change-me"
    static let otherAppID = "100000000000002"
    /// The Easy Login client every test stack registers.
    static let clientID = "test-app"
    static let appRedirect = "testapp://auth"
    static let loopbackRedirect = "http://127.0.0.1/callback"
    /// The raw nonce tests send beside a Limited Login token by default.
    static let rawNonce = "raw-nonce-123"

    /// The `nonce` claim an app gets into the id token for `raw`: its SHA-256 hex, as the SDK
    /// (and Firebase's convention) gives Facebook, which the server's default mode requires.
    static func nonceClaim(_ raw: String) -> String {
        Hex.encode(SHA256.hash(data: Data(raw.utf8)))
    }
}

/// The emulator and the server, both live on free ports, sharing one test clock.
struct Stack: Sendable {
    let server: any TestClientProtocol
    let emulatorURL: String
    let clock: TestClock
    /// The server's store: in-memory SQLite, or PostgreSQL with `LATCHKEY_TEST_DATABASE=postgres`.
    let store: any LatchkeyStore
    /// The configuration the server runs with (a random key-encryption key included).
    var configuration = ServerConfiguration()
    /// Everything the server logged, scanned for secrets when the stack stops.
    var logs = LogCapture()

    /// The server's base URL, for clients other than the test client (the SDK's URLSession).
    var serverURL: URL { URL(string: boundURL ?? "http://127.0.0.1:\(server.port ?? 0)")! }
    /// With `browsable`, the public URL the server learned when it bound.
    var boundURL: String?

    /// Runs `body` against a fresh emulator + server + store (`TestStores.withServerStore`).
    ///
    /// - Parameter browsable: leave the public URL to the bound address (`http://127.0.0.1:PORT`)
    ///   instead of `http://latchkey.test`, and register its Facebook callback with the emulator, for
    ///   flows where a browser or another program follows the server's redirects.
    /// - Parameter clock: the emulator's and the server's clock; a test whose tokens a server on the
    ///   real clock checks (a child process) starts it at the real time.
    /// - Parameter store: a store of the test's own (not closed here) instead of a fresh one.
    static func run(
        clock: TestClock = TestClock(),
        browsable: Bool = false,
        apple: Bool = false,
        store given: (any LatchkeyStore)? = nil,
        emulatorSeed: @Sendable (inout EmulatorSeed) -> Void = { _ in },
        _ configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (Stack) async throws -> Void
    ) async throws {
        let quiet: Logger = {
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            return logger
        }()
        var seed = EmulatorSeed.demo
        seed.apps[0].redirectURIs.append("http://latchkey.test/v1/oauth/facebook/callback")
        emulatorSeed(&seed)
        let emulator = try await buildEmulator(
            configuration: EmulatorConfiguration(
                port: 0, seed: seed, clock: { clock.now }, apple: apple ? AppleDemo.registration : nil),
            logger: quiet)
        try await emulator.test(.live) { emulatorClient in
            let base = "http://127.0.0.1:\(emulatorClient.port ?? 0)"
            var configuration = ServerConfiguration()
            configuration.http.port = 0
            configuration.facebook.apps = [.init(id: Demo.appID, secret: Demo.secret)]
            configuration.facebook.graphURL = "\(base)/v21.0"
            configuration.facebook.jwksURL = "\(base)/.well-known/oauth/openid/jwks/"
            configuration.facebook.dialogURL = "\(base)/dialog/oauth"
            configuration.http.publicURL = browsable ? nil : "http://latchkey.test"
            configuration.easyLogin.clients = [
                OAuthClient(id: Demo.clientID, redirectURIs: [Demo.appRedirect, Demo.loopbackRedirect])
            ]
            configuration.clock = { clock.now }
            // A loaded test pass (every suite at once on two cores, PostgreSQL beside) can keep
            // the in-process emulator from answering for seconds. With the default 5 s, a slow
            // start-up credential check would re-check in the background (adding `/app` calls to
            // counts tests assert) and a slow Graph answer would turn a test's expected error into
            // `facebook_unavailable`. Tests of timeouts set their own.
            configuration.facebook.timeout = 30
            // HummingbirdTesting's live client opens its one connection when the test starts, and a
            // loaded pass may first use it many seconds later; the first-head deadline is a
            // stranger's, not this client's. Tests of the deadline set their own.
            // Idle keep-alive too: a test may spend minutes of a loaded pass on the emulator alone
            // (FacebookUsageTests spends 198 calls on it, 189 s in one full pass here) before its
            // next request on that connection, which the 75 s default would have closed ("I/O on
            // closed channel"). Tests of idleness set their own.
            configuration.http.idleTimeout = 900
            configuration.http.firstRequestTimeout = configuration.http.idleTimeout
            // Background jobs run when a test says (`JobService.runOnce()` on the test clock), never
            // on the server's own real-time interval, which a loaded pass could reach mid-test.
            configuration.maintenance.jobInterval = 3600
            let kek = KeyEncryptionKey.generate()
            configuration.secrets.keyEncryptionKey = kek.key
            if apple { AppleDemo.configure(&configuration, emulator: base) }
            configure(&configuration)
            let configured = configuration
            let logs = LogCapture()
            do {
                try await TestStores.withServerStore(given) { store in
                    let server = try await buildApplication(
                        configuration: configured, store: store, logger: logs.logger(label: "latchkey"),
                        metrics: ServerMetrics(clock: { clock.now }))
                    try await server.test(.live) { client in
                        var stack = Stack(
                            server: client, emulatorURL: base, clock: clock, store: store, configuration: configured,
                            logs: logs)
                        if browsable {
                            let issuer = try await stack.get("/.well-known/oauth-authorization-server").json()["issuer"]
                            stack.boundURL = try #require(issuer?.stringValue)
                            _ = try await stack.emulator(
                                "/_emulator/apps/\(Demo.appID)/redirect-uris",
                                [
                                    "redirect_uri": .string(
                                        stack.serverURL.absoluteString + "/v1/oauth/facebook/callback")
                                ])
                        }
                        try await body(stack)
                    }
                }
            } catch {
                logs.expectNoSecrets(kek: kek.encoded, configured)
                throw error
            }
            // Whatever the test did, even a failed start, the server's log holds no token, code,
            // proof or secret.
            logs.expectNoSecrets(kek: kek.encoded, configured)
        }
    }

    // MARK: Server calls

    @discardableResult
    func post(_ path: String, json: JSONValue, headers: HTTPFields = [:]) async throws -> TestResponse {
        var headers = headers
        headers[.contentType] = "application/json"
        return try await server.execute(
            uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: json.encoded()))
    }

    func get(_ path: String, bearer: String? = nil) async throws -> TestResponse {
        var headers = HTTPFields()
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        return try await server.execute(uri: path, method: .get, headers: headers)
    }

    /// A form POST (`application/x-www-form-urlencoded`), as OAuth clients call the token endpoint.
    func postForm(_ path: String, _ pairs: [(String, String)]) async throws -> TestResponse {
        var headers = HTTPFields()
        headers[.contentType] = "application/x-www-form-urlencoded"
        return try await server.execute(
            uri: path, method: .post, headers: headers, body: ByteBuffer(string: FormEncoding.encode(pairs)))
    }

    /// `POST /v1/auth/facebook`.
    func signIn(_ body: JSONValue) async throws -> TestResponse { try await post("/v1/auth/facebook", json: body) }

    // MARK: Emulator controls

    func emulator(_ path: String, _ body: JSONValue) async throws -> JSONValue {
        var request = HTTPClientRequest(url: emulatorURL + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body.encoded()))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return try JSONValue.decode(Data(bytes.readableBytesView))
    }

    func emulatorGET(_ path: String) async throws -> JSONValue {
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: emulatorURL + path), timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return try JSONValue.decode(Data(bytes.readableBytesView))
    }

    func emulatorDelete(_ path: String) async throws {
        var request = HTTPClientRequest(url: emulatorURL + path)
        request.method = .DELETE
        _ = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
    }

    func facebookToken(
        _ user: String = "alice", app: String = Demo.appID, scopes: [String] = ["email"]
    ) async throws
        -> String
    {
        let body = try await emulator(
            "/_emulator/tokens",
            ["app_id": .string(app), "user": .string(user), "scopes": .array(scopes.map(JSONValue.string))])
        return try #require(body["access_token"]?.stringValue)
    }

    func idToken(
        _ user: String = "alice", nonce: String? = Demo.nonceClaim(Demo.rawNonce), defect: String? = nil,
        scopes: [String] = ["email"]
    ) async throws -> String {
        var body: [String: JSONValue] = [
            "app_id": .string(Demo.appID), "user": .string(user), "scopes": .array(scopes.map(JSONValue.string)),
        ]
        if let nonce { body["nonce"] = .string(nonce) }
        if let defect { body["defect"] = .string(defect) }
        return try #require(try await emulator("/_emulator/id-tokens", .object(body))["id_token"]?.stringValue)
    }
}

extension TestResponse {
    func json() throws -> JSONValue { try JSONValue.decode(Data(body.readableBytesView)) }
    /// Latchkey's code, from either error shape (`{"error": {"code"}}`, or the token endpoint's
    /// `{"error": "invalid_grant", "error_code": …}`).
    var errorCode: String? {
        let body = try? json()
        return body?["error"]?["code"]?.stringValue ?? body?["error_code"]?.stringValue
    }
}
