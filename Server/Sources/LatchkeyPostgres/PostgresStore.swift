import Foundation
import LatchkeyServer
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization

/// The store for several servers sharing one PostgreSQL database.
///
/// Each operation takes one connection from a bounded pool (kept leased between operations,
/// `HeldConnections`) and runs as one statement where it can (a sign-in: nearly always one
/// statement, else a read and a write; a refresh: one), or one transaction otherwise; the domain
/// rules come from `StorageRules`, as in every backend. Races between servers are settled by the
/// database (`INSERT … ON CONFLICT`, conditional `UPDATE`s, row locks), never by a lock in one
/// process.
///
/// Every operation is bounded by `timeout`: waiting for a connection, and the query itself (the
/// connection is closed when the time is up, and PostgreSQL's `statement_timeout` ends the query
/// on its side). A database that is down or unreachable therefore surfaces as `StoreUnavailable`
/// (503 with `Retry-After`) within the timeout, and the pool opens new connections by itself once
/// it is back.
package final class PostgresStore: LatchkeyStore {
    let client: PostgresClient
    /// The pool's connections, kept between operations.
    let connections: HeldConnections
    /// Names why operations get no connection (`latchkey.database.unreachable`).
    let diagnosis: ConnectionDiagnosis
    let timeout: Duration
    /// The pool's connection settings, for the one connection `firstConnection` opens itself.
    let firstConnectionSettings: PostgresConnection.Configuration
    /// For the pool's events and the start's.
    let logger: Logger
    /// The URL without its password: what the store prints as.
    let shownURL: String
    /// Whether hot operations take their one-statement paths (a sign-in, a refresh token's
    /// rotation), which report facts and leave the verdicts to `Verdicts`. Off, each reads its
    /// facts and then writes, guarded: slower, and there so that the storage contract can run
    /// on both and show they answer alike (a differential test). Always on in a server.
    let fastPaths: Bool
    /// Where each operation's duration is reported (`/metrics`).
    package let observation = StoreObservation()
    /// The connections' event loops, which also run each operation's timer.
    static let eventLoops: any EventLoopGroup = PostgresClient.defaultEventLoopGroup
    private let runner: Task<Void, Never>

    /// Connects to `url` (lazily: the first operation opens the first connection).
    ///
    /// - Parameters:
    ///   - url: where the database is, and how to protect the connection.
    ///   - poolSize: the most connections this store holds.
    ///   - timeout: the longest an operation waits for a connection and its answer.
    ///   - logger: for the pool's own events (connection failures); never a query's values.
    ///   - fastPaths: whether hot operations take their one-statement paths (tests turn them off).
    package init(
        url: PostgresURL, poolSize: Int = 10, timeout: Duration = .seconds(5), logger: Logger, fastPaths: Bool = true
    ) throws {
        self.fastPaths = fastPaths
        let tlsConfiguration = try Self.tls(url)
        var configuration = PostgresClient.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: tlsConfiguration.map { .require($0) } ?? .disable)
        configuration.options.maximumConnections = max(1, poolSize)
        configuration.options.connectTimeout = url.connectTimeout.map { .seconds($0) } ?? timeout
        // No keep-alive query: the pool sets a keep-alive timer (a task and a Dispatch timer)
        // each time a connection goes back idle, and the next lease cancels it, a timer per
        // query for nothing under load (23 µs of node CPU per sign-in, docs/performance.md).
        // What the query did: it found a connection silently dead after 30–60 s idle in the pool;
        // such a connection now costs its next operation the timeout and a 503, and is closed.
        // (Operations lease through `HeldConnections`, which keeps connections between them, so
        // the pool's timers only run when a connection goes back to it.)
        configuration.options.keepAliveBehavior = nil
        let milliseconds = max(1, Int((timeout / .milliseconds(1)).rounded(.up)))
        // The server ends a statement that outlives the timeout, and a transaction left open by a
        // vanished client, so neither holds locks other servers wait on.
        configuration.options.additionalStartupParameters = [
            ("application_name", url.applicationName), ("statement_timeout", "\(milliseconds)"),
            ("idle_in_transaction_session_timeout", "\(max(milliseconds * 2, 10_000))"),
            // The database gives up on a node that vanished without closing its connections
            // within two minutes, idle (probes after 60 s, then every 10 s) or with data unacknowledged
            // (`tcp_user_timeout`), and frees the session's slot. Its locks go sooner, with the
            // statement and transaction timeouts above.
            ("tcp_keepalives_idle", "60"), ("tcp_keepalives_interval", "10"), ("tcp_keepalives_count", "6"),
            ("tcp_user_timeout", "120000"),
        ]
        if let options = url.options { configuration.options.additionalStartupParameters.append(("options", options)) }
        self.client = PostgresClient(
            configuration: configuration, eventLoopGroup: Self.eventLoops, backgroundLogger: logger)
        self.firstConnectionSettings = try Self.firstConnectionSettings(
            url: url, tls: tlsConfiguration, pool: configuration)
        self.logger = logger
        self.diagnosis = ConnectionDiagnosis(settings: firstConnectionSettings, logger: logger)
        self.shownURL = url.description
        self.connections = HeldConnections(client: client, limit: max(1, poolSize), staleLease: timeout / 2)
        self.timeout = timeout
        let client = self.client
        let connections = self.connections
        // The pool's background work (opening connections, closing idle ones), and once a second
        // the return of connections held idle and the retry of leases the pool left waiting, for
        // as long as the store lives; `close()` ends both.
        self.runner = Task {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    // Leases wait for this (`HeldConnections.poolRuns`), or for `close()`.
                    connections.poolRuns()
                    await client.run()
                }
                group.addTask {
                    while (try? await Task.sleep(for: .seconds(1))) != nil {
                        connections.releaseIdle()
                        connections.retryStaleLeases()
                    }
                }
            }
        }
    }

    /// Closes every connection. The store cannot be used afterwards.
    package func close() async {
        // The held connections go back, and waiting operations are told, before the pool's
        // shutdown, which closes whatever is still leased without waiting for it.
        connections.close()
        runner.cancel()
        await runner.value
    }

    /// The TLS `url` asks for, or `nil` for none.
    private static func tls(_ url: PostgresURL) throws -> TLSConfiguration? {
        switch url.tls {
        case .disable: return nil
        case .require:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .none
            return configuration
        case .verifyFull:
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.certificateVerification = .fullVerification
            if let path = url.rootCertificatePath { configuration.trustRoots = .file(path) }
            return configuration
        }
    }

    // MARK: Running operations

    /// Runs `body` on one leased connection within the timeout, turning connection failures into
    /// `StoreUnavailable` and other database errors into `PostgresStoreError` (without the
    /// query's values, which the driver's own error would print).
    func withConnection<T: Sendable>(
        _ operation: StaticString, timeout: Duration? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let connections = self.connections
        let timeout = timeout ?? self.timeout
        let diagnosis = self.diagnosis
        return try await observation.timed("\(operation)") {
            try await withConnection(
                operation, timeout: timeout, connections: connections, diagnosis: diagnosis, body)
        }
    }

    /// `withConnection`, untimed.
    private func withConnection<T: Sendable>(
        _ operation: StaticString, timeout: Duration, connections: HeldConnections, diagnosis: ConnectionDiagnosis,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        // Whether the time ran out in the query (a slow database) or before any connection (one
        // down or refusing): they read differently, and the second is diagnosed.
        let leased = Atomic(false)
        do {
            return try await Deadline.run(
                within: timeout,
                timedOut: {
                    if leased.load(ordering: .relaxed) {
                        return StoreUnavailable("no answer within \(timeout) (\(operation))")
                    }
                    diagnosis.diagnose()
                    return StoreUnavailable(
                        "no connection within \(timeout) (\(operation))"
                            + (diagnosis.recentCause.map { ": \($0)" }
                                ?? ": PostgreSQL is stopped, unreachable or refusing connections"))
                }
            ) {
                let held: HeldConnections.Held
                do {
                    held = try await connections.take()
                    leased.store(true, ordering: .relaxed)
                } catch let failure as HeldConnections.LeaseFailure {
                    // No connection to lease: the pool's circuit breaker once the database has
                    // been unreachable a while, its shutdown, the store closed.
                    if let error = failure.error as? PSQLError { throw error }
                    throw StoreUnavailable("no connection (\(operation)): \(failure.error)")
                }
                // Served as the time ran out: the connection goes back unused, not closed.
                guard !Task.isCancelled else {
                    connections.giveBack(held, reusable: true)
                    throw CancellationError()
                }
                let connection = held.connection
                let closing = Atomic(false)
                do {
                    // Closing the connection is what stops a query stuck on a silent network;
                    // it is not lent again, and another is leased on demand.
                    let result = try await withTaskCancellationHandler {
                        try await body(connection)
                    } onCancel: {
                        closing.store(true, ordering: .relaxed)
                        _ = connection.close() as EventLoopFuture<Void>
                    }
                    connections.giveBack(held, reusable: !closing.load(ordering: .relaxed))
                    return result
                } catch {
                    let usable = !closing.load(ordering: .relaxed) && Self.leavesConnectionUsable(error)
                    connections.giveBack(held, reusable: usable)
                    throw error
                }
            }
        } catch let error as PSQLError {
            throw Self.translate(error, operation: operation)
        }
    }

    /// Runs `body` in one transaction on one connection (BEGIN … COMMIT, rolled back on error,
    /// the error rethrown as it was: the driver's own helper would wrap it).
    func transaction<T: Sendable>(
        _ operation: StaticString, timeout: Duration? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withConnection(operation, timeout: timeout) { connection in
            try await connection.run("BEGIN")
            do {
                let result = try await body(connection)
                try await connection.run("COMMIT")
                return result
            } catch {
                // A connection whose rollback fails is closed, never lent again inside a
                // transaction it could not end.
                do { try await connection.run("ROLLBACK") } catch { try? await connection.close() }
                throw error
            }
        }
    }

    /// Whether a connection can serve the next operation after `error`: yes after an error of
    /// our own, or the server's refusal of the values (data, constraint, transaction conflict,
    /// our `LK001`); otherwise it is closed and replaced.
    ///
    /// Why so narrow: the connection itself may have failed, or the server ended the session
    /// (FATAL: terminated, shut down, connection exceptions) before the driver read the close.
    /// And the driver remembers a failed preparation on its connection and answers every later
    /// run of that statement there with it, without asking the server: a lock timeout during a
    /// migration, a cancelled Parse or a changed result type would fail on that connection for
    /// as long as it lived.
    private static func leavesConnectionUsable(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return !(error is CancellationError) }
        guard error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        return state.hasPrefix("22") || state.hasPrefix("23") || state.hasPrefix("40") || state == "LK001"
    }

    /// A driver error as the store reports it.
    static func translate(_ error: PSQLError, operation: StaticString) -> any Error {
        let state = error.serverInfo?[.sqlState] ?? ""
        let message = error.serverInfo?[.message] ?? "\(error.code)"
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
            .queryCancelled, .sslUnsupported, .failedToAddSSLHandler:
            return StoreUnavailable("\(error.code) (\(operation))")
        default: break
        }
        // Connection exceptions, too many connections, the server shutting down or starting,
        // statement_timeout: the database, not the request.
        // Deadlocks and serialization failures (40P01, 40001) too: the request did nothing wrong,
        // and a retry succeeds.
        if state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P") || state == "57014"
            || state.hasPrefix("40")
        {
            return StoreUnavailable("\(message) [\(state)] (\(operation))")
        }
        return PostgresStoreError(operation: "\(operation)", sqlState: state, message: message)
    }

    /// Runs `SELECT 1` (readiness).
    package func ping() async throws {
        try await withConnection("ping", timeout: min(timeout, Self.pingTimeout)) { connection in
            try await connection.run("SELECT 1")
        }
    }

    /// The longest `/ready` waits for the database, whatever `LATCHKEY_DATABASE_TIMEOUT` says: a
    /// database refusing connections must not hold a load balancer's health check past its own
    /// timeout (commonly 2–5 s), which would count a slow answer as a failed check, not as 503.
    package static let pingTimeout: Duration = .seconds(1)

    /// The driver logs every query at debug level with its values; a query's values are tokens'
    /// hashes, nonces and properties, which never go to a log.
    static let quiet = Logger(label: "latchkey.postgres.query", factory: { _ in SwiftLogNoOpLogHandler() })
}

/// A database error that is not about availability: a constraint the store did not expect, a
/// schema changed behind its back. A 500, since it is ours to fix.
package struct PostgresStoreError: Error, Sendable, CustomStringConvertible {
    /// The store operation.
    package let operation: String
    /// PostgreSQL's SQLSTATE.
    package let sqlState: String
    /// PostgreSQL's primary message (never the query or its values).
    package let message: String

    /// For the log.
    package var description: String { "PostgreSQL error \(sqlState) in \(operation): \(message)" }
}

/// The store prints as its URL without the password, in every form: the pool's configuration it
/// holds carries the password, and `dump` (or the default printing of anything holding the store)
/// would otherwise walk into it.
extension PostgresStore: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `PostgresStore(postgres://user:***@host:port/database?sslmode=…)`.
    package var description: String { "PostgresStore(\(shownURL))" }
    /// The same as `description`.
    package var debugDescription: String { description }
    /// The URL without its password only.
    package var customMirror: Mirror { Mirror(self, children: ["url": shownURL]) }
}
