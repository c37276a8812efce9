import Foundation
import LatchkeyServer
import NIOSSL
import Testing

@testable import LatchkeyPostgres
@testable import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// A server's start and every `db` command open one connection before migrating
/// (`PostgresStore.firstConnection`): a refusal that waiting cannot fix ends them at once with
/// PostgreSQL's reason, a database not answering yet is waited for.
@Suite("PostgreSQL: the first connection", .timeLimit(.minutes(5)))
struct PostgresFirstConnectionTests {
    /// What `url` refuses, from a store's migration.
    static func refusal(_ url: PostgresURL) async throws -> PostgresConnectionRefused {
        let store = try PostgresStore(url: url, poolSize: 1, timeout: TestPostgres.timeout, logger: TestPostgres.quiet)
        let outcome = await Self.outcome { try await store.migrate() }
        await store.close()
        guard case .failure(let error) = outcome else { throw Unrefused() }
        return try #require(error as? PostgresConnectionRefused, "\(error)")
    }

    struct Unrefused: Error {}

    /// `body`'s result or error, so that what it opened is closed either way.
    static func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    /// A URL the test cluster refuses, and how the refusal must read.
    struct Refused: Sendable, CustomTestStringConvertible {
        let name: String
        let change: @Sendable (inout PostgresURL) -> Void
        let sqlState: String?
        /// In the message: PostgreSQL's words, or how to mend the URL.
        let says: String
        var testDescription: String { name }

        static let all: [Refused] = [
            // A password the message must not hold (looked for in every case).
            Refused(
                name: "a wrong password", change: { $0.password = "not-the-Password-4711" }, sqlState: "28P01",
                says: "password authentication failed"),
            Refused(
                name: "a database that does not exist", change: { $0.database = "no_such_database" },
                sqlState: "3D000", says: "no_such_database"),
            Refused(
                name: "TLS asked of a server without it", change: { $0.tls = .require }, sqlState: nil,
                says: "sslmode=disable"),
        ]
    }

    @Test(
        "refused at once, in PostgreSQL's words or saying what to change, never with the password",
        arguments: Refused.all)
    func refusedAtOnce(_ refused: Refused) async throws {
        guard var url = try TestPostgres.url() else { return }
        refused.change(&url)
        let error = try await Self.refusal(url)
        #expect(error.sqlState == refused.sqlState)
        #expect(error.description.contains(refused.says))
        #expect(!error.description.contains("4711"))
    }

    /// A store of `url` moved to `port` (where nothing listens), with a password the logs must
    /// never show, logging into the capture.
    static func refused(_ url: PostgresURL, port: Int, timeout: Duration) throws -> (PostgresStore, LogCapture) {
        var url = url
        url.port = port
        url.password = "not-the-Password-4711"
        let capture = LogCapture()
        return (
            try PostgresStore(url: url, poolSize: 1, timeout: timeout, logger: capture.logger(label: "test")),
            capture
        )
    }

    @Test("nothing listening: unavailable once the wait is over, with the last attempt's cause, never the password")
    func nothingListening() async throws {
        guard let url = try TestPostgres.url() else { return }
        let refusing = try HeldPort.refusing()
        defer { close(refusing.descriptor) }
        let (store, capture) = try Self.refused(url, port: refusing.port, timeout: TestPostgres.timeout)
        let outcome = await Self.outcome { try await store.migrate(waitingForDatabase: .seconds(2)) }
        await store.close()
        guard case .failure(let error) = outcome, let unavailable = error as? StoreUnavailable else {
            Issue.record("expected unavailable, got \(outcome)")
            return
        }
        // How many attempts fit in the wait, and whether the last was refused or ran out of
        // time, depend on the machine's load (on a loaded full pass the first attempt outlasted
        // the wait): that it retries is `startedLater`'s to show.
        let cause = try #require(unavailable.reason.firstRange(of: "attempts); the last: ")).upperBound
        #expect(cause < unavailable.reason.endIndex)
        #expect(capture.all.filter { $0.contains("latchkey.database.waiting") }.count == 1)
        #expect(!(capture.all + [unavailable.description]).joined().contains("4711"))
    }

    @Test("PgBouncer's own refusals under 08P01 end the start; its other 08P01s, and a server starting, are waited out")
    func poolerRefusals() {
        let cases: [(state: String, message: String, refused: Bool)] = [
            ("08P01", "unsupported startup parameter: statement_timeout", true),
            ("08P01", "password authentication failed", true),
            ("08P01", "no such database: latchkey", true),
            ("08P01", "no more connections allowed (max_client_conn)", false),
            ("08006", "no such database: latchkey", false),
            ("57P03", "the database system is starting up", false),
            ("53300", "sorry, too many clients already", false),
            ("42704", "unrecognized configuration parameter \"x\"", true),
        ]
        for (state, message, refused) in cases {
            let error = PSQLError.server(.init(fields: [.sqlState: state, .message: message]))
            let refusal: PostgresConnectionRefused? = PostgresStore.refusal(error as any Error)
            #expect((refusal != nil) == refused, "\(state) \(message)")
            #expect(refusal.map { $0.sqlState == state && $0.reason == message } ?? true)
        }
    }

    @Test("TLS: a peer closing the handshake is waited out; a certificate refused is not")
    func tlsFailures() {
        #expect(PostgresStore.refusal(NIOSSLError.uncleanShutdown) == nil)
        #expect(PostgresStore.refusal(NIOSSLError.handshakeFailed(.sslError([.eofDuringHandshake]))) == nil)
        #expect(PostgresStore.refusal(NIOSSLError.handshakeFailed(.sslError([]))) != nil)
        #expect(PostgresStore.refusal(NIOSSLExtraError.failedToValidateHostname) != nil)
        #expect(PostgresStore.refusal(CancellationError()) == nil)
        // A private CA (managed databases): the message says what to set.
        let unverified = PostgresStore.tlsReason(
            "handshakeFailed(NIOSSL.BoringSSLError.sslError([Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED]))"
        )
        #expect(unverified.contains("sslrootcert=") && unverified.contains("LATCHKEY_DATABASE_URL"))
        #expect(unverified.contains("CERTIFICATE_VERIFY_FAILED"))
        #expect(!PostgresStore.tlsReason("handshakeFailed(sslError([]))").contains("sslrootcert"))
        let host = PostgresStore.refusal(NIOSSLExtraError.failedToValidateHostname)?.reason ?? ""
        #expect(host.contains("does not name the host"))
    }

    @Test("/ready answers 503 within its own deadline while the database refuses connections")
    func readyWhileRefused() async throws {
        guard try TestPostgres.url() != nil else { return }
        let cluster = try await TestCluster.start()
        // A database timeout far above /ready's own: the answer must not wait for it.
        let store = try PostgresStore(url: cluster.url, poolSize: 2, timeout: .seconds(120), logger: TestPostgres.quiet)
        let outcome = await Self.outcome {
            try await Stack.run(store: store) { stack in
                #expect(try await stack.get("/ready").status == .ok)
                try await cluster.down()
                let answer = try await stack.get("/ready")
                #expect(answer.status == .serviceUnavailable && answer.headers[.retryAfter] == "5")
                #expect(try answer.json()["database"] == "unreachable")
                let cause = try #require(stack.logs.all.first { $0.contains("latchkey.ready.database_down") })
                #expect(!cause.contains("within 120"), "\(cause)")
            }
            return 0
        }
        await store.close()
        await cluster.stop()
        _ = try outcome.get()
    }

    @Test("the readiness ping gives up after its own second on a database that accepts and never answers")
    func pingDeadline() async throws {
        // Listening, never accepting: the connection opens and PostgreSQL's greeting never comes.
        let held = try HeldPort.hold()
        defer { close(held.descriptor) }
        let url = try PostgresURL("postgres://latchkey@127.0.0.1:\(held.port)/latchkey?sslmode=disable")
        let store = try PostgresStore(url: url, poolSize: 1, timeout: .seconds(120), logger: TestPostgres.quiet)
        let outcome = await Self.outcome { try await store.ping() }
        await store.close()
        guard case .failure(let error) = outcome else {
            Issue.record("a database that never answers was ready")
            return
        }
        // The store's own deadline is 120 s; the ping's, a second.
        #expect("\(error)".contains("within 1.0 seconds (ping)"), "\(error)")
    }

    @Test("a database started after the server is waited for, then migrated")
    func startedLater() async throws {
        guard try TestPostgres.url() != nil else { return }
        let cluster = try await TestCluster.start()
        let capture = LogCapture()
        let store = try PostgresStore(
            url: cluster.url, poolSize: 1, timeout: TestPostgres.timeout, logger: capture.logger(label: "test"))
        let outcome = await Self.outcome {
            try await cluster.down()
            // Bounded by the suite's time limit, not the wait: a loaded pass is slow to restart a
            // cluster.
            let migrating = Task { try await store.migrate(waitingForDatabase: .seconds(600)) }
            try await eventually("the start waits for the database") {
                capture.all.contains { $0.contains("latchkey.database.waiting") }
            }
            try await cluster.up()
            try await migrating.value
            return try await store.integer("SELECT count(*) FROM schema_migrations")
        }
        await store.close()
        await cluster.stop()
        #expect(try outcome.get() == PostgresStore.knownSchemaVersion)
    }
}

/// PostgreSQL refusing connections at run time is named as that, not as a slow database.
@Suite("PostgreSQL: no connection at run time")
struct PostgresRunTimeConnectionTests {
    @Test("an operation that gets no connection says so, and the cause is found and named")
    func refusedAtRunTime() async throws {
        guard let url = try TestPostgres.url() else { return }
        let refusing = try HeldPort.refusing()
        defer { close(refusing.descriptor) }
        let (store, capture) = try PostgresFirstConnectionTests.refused(
            url, port: refusing.port, timeout: .milliseconds(300))
        func failure() async -> StoreUnavailable? {
            do {
                _ = try await store.user(id: "anyone")
                return nil
            } catch {
                return error as? StoreUnavailable
            }
        }
        let first = try #require(await failure())
        #expect(first.reason.hasPrefix("no connection within"), "\(first.reason)")
        #expect(!first.reason.contains("no answer"))
        await store.diagnosis.diagnose()?.value
        let logged = capture.all.filter { $0.contains("latchkey.database.unreachable") }
        // One try per 5 s: on a loaded machine the first failure may outlast that, and the wait
        // above start a second.
        #expect(!logged.isEmpty && logged.allSatisfy { $0.contains("refuses connections") }, "\(logged)")
        let second = try #require(await failure())
        #expect(second.reason.contains("PostgreSQL refuses connections at 127.0.0.1:\(refusing.port)"), "\(second)")
        #expect(!(capture.all + [first.description, second.description]).joined().contains("4711"))
        await store.close()
    }
}
