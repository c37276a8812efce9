import CoreMetrics
import Foundation
import Prometheus
import Synchronization

/// The server's metrics, through swift-metrics into a Prometheus registry of its own (one per
/// server built, so tests never share counts), rendered at `GET /metrics` in Prometheus' text
/// format. Names and labels are docs/operations.md's contract; no label ever holds a user id, a
/// token or an address: every label value comes from a short fixed list (a route's template, a
/// status, an error code, a provider's endpoint name).
///
/// Why metric objects are cached here: creating a swift-metrics `Counter` asks the factory, which
/// takes the registry's lock and builds its key, for every request; the cache is one dictionary
/// lookup under an uncontended lock.
package final class ServerMetrics: StoreObserver {
    /// Where every metric is kept, and what `/metrics` renders.
    package let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let counters = Mutex<[Key: CoreMetrics.Counter]>([:])
    private let timers = Mutex<[Key: CoreMetrics.Timer]>([:])
    private let commitSizes: CoreMetrics.Recorder
    /// The last day, hour by hour, for the console's dashboard.
    package let history: MetricsHistory

    /// A metric and its label values.
    private struct Key: Hashable {
        let name: String
        let labels: [String]
    }

    /// Seconds: a request, a provider's answer, from a millisecond to the longest timeout.
    static let durationBuckets: [Duration] = [
        .microseconds(1000), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
    ]

    /// A new registry; `clock` dates the dashboard's hours.
    package init(clock: @escaping @Sendable () -> Date = { Date() }) {
        history = MetricsHistory(clock: clock)
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.durationBuckets
        factory.valueHistogramBuckets["latchkey_sqlite_group_commit_transactions"] = [1, 2, 4, 8, 16, 32, 64]
        self.factory = factory
        commitSizes = CoreMetrics.Recorder(
            label: "latchkey_sqlite_group_commit_transactions", dimensions: [], aggregate: true, factory: factory)
    }

    private func counter(_ name: String, _ labels: KeyValuePairs<String, String>) -> CoreMetrics.Counter {
        let key = Key(name: name, labels: labels.map(\.value))
        return counters.withLock { cached in
            if let counter = cached[key] { return counter }
            let counter = CoreMetrics.Counter(
                label: name, dimensions: labels.map { ($0.key, $0.value) }, factory: factory)
            cached[key] = counter
            return counter
        }
    }

    private func timer(_ name: String, _ labels: KeyValuePairs<String, String>) -> CoreMetrics.Timer {
        let key = Key(name: name, labels: labels.map(\.value))
        return timers.withLock { cached in
            if let timer = cached[key] { return timer }
            let timer = CoreMetrics.Timer(label: name, dimensions: labels.map { ($0.key, $0.value) }, factory: factory)
            cached[key] = timer
            return timer
        }
    }

    // MARK: Events

    /// An HTTP request answered: `latchkey_http_requests_total{method,route,status}` and
    /// `latchkey_http_request_duration_seconds{method,route}`.
    func request(method: String, route: String, status: Int, duration: Duration) {
        counter("latchkey_http_requests_total", ["method": method, "route": route, "status": String(status)])
            .increment()
        timer("latchkey_http_request_duration_seconds", ["method": method, "route": route]).recordNanoseconds(
            Self.nanoseconds(duration))
    }

    /// An error answered: `latchkey_errors_total{code}` (the stable code of the answer).
    func error(code: String) {
        counter("latchkey_errors_total", ["code": code]).increment()
        history.error(code: code)
    }

    /// A sign-in the store recorded: `latchkey_sign_ins_total{provider,method,outcome}`;
    /// `outcome` is `created` (a new user), `returning`, or `second_factor` (held for a code).
    func signIn(provider: String, method: String, outcome: String) {
        counter("latchkey_sign_ins_total", ["provider": provider, "method": method, "outcome": outcome]).increment()
        if outcome != "second_factor" { history.signIn(provider: provider, method: method) }
    }

    /// A code sent to a second-factor challenge: `latchkey_second_factor_attempts_total{purpose,outcome}`
    /// (`outcome`: `passed`, `wrong_code`, `challenge_invalid`, `locked`).
    func factorAttempt(purpose: String, outcome: String) {
        counter("latchkey_second_factor_attempts_total", ["purpose": purpose, "outcome": outcome]).increment()
    }

    /// A second-factor challenge issued: `latchkey_second_factor_challenges_total{purpose}`.
    func factorChallenge(purpose: String) {
        counter("latchkey_second_factor_challenges_total", ["purpose": purpose]).increment()
    }

    /// A call to Facebook or Apple: `latchkey_provider_requests_total{provider,endpoint,outcome}`
    /// (`outcome`: `answered`, or `failed` for no answer or a 5xx) and
    /// `latchkey_provider_request_duration_seconds{provider,endpoint}`.
    func providerCall(provider: String, endpoint: String, failed: Bool, duration: Duration) {
        counter(
            "latchkey_provider_requests_total",
            ["provider": provider, "endpoint": endpoint, "outcome": failed ? "failed" : "answered"]
        ).increment()
        timer("latchkey_provider_request_duration_seconds", ["provider": provider, "endpoint": endpoint])
            .recordNanoseconds(Self.nanoseconds(duration))
        history.providerCall(provider: provider, failed: failed, seconds: Double(Self.nanoseconds(duration)) / 1e9)
    }

    /// A provider's signing keys fetched: `latchkey_jwks_refreshes_total{provider,outcome}`.
    func keySetRefresh(provider: String, succeeded: Bool) {
        counter("latchkey_jwks_refreshes_total", ["provider": provider, "outcome": succeeded ? "fetched" : "failed"])
            .increment()
    }

    // MARK: Storage

    /// A store operation: `latchkey_database_operation_duration_seconds{operation}` (PostgreSQL:
    /// the operation's name; SQLite: `transaction`), and
    /// `latchkey_database_operation_failures_total{operation}` when it failed.
    package func databaseOperation(_ name: String, duration: Duration, failed: Bool) {
        timer("latchkey_database_operation_duration_seconds", ["operation": name]).recordNanoseconds(
            Self.nanoseconds(duration))
        if failed { counter("latchkey_database_operation_failures_total", ["operation": name]).increment() }
    }

    /// A SQLite commit of `transactions` callers' transactions:
    /// `latchkey_sqlite_group_commit_transactions` (a histogram, 1 to 64).
    package func groupCommit(transactions: Int) {
        commitSizes.record(transactions)
    }

    // MARK: Scraping

    /// The registry in Prometheus' text format, after setting the gauges read at scrape time.
    func render(_ gauges: StoreGauges?) -> String {
        if let gauges {
            registry.makeGauge(name: "latchkey_active_sessions").set(Double(gauges.activeSessions))
            registry.makeGauge(name: "latchkey_deletion_requests_open", labels: [("status", "received")])
                .set(Double(gauges.deletionsReceived))
            registry.makeGauge(name: "latchkey_deletion_requests_open", labels: [("status", "in_progress")])
                .set(Double(gauges.deletionsInProgress))
            registry.makeGauge(name: "latchkey_jobs_due").set(Double(gauges.jobsDue))
            if let pool = gauges.pool {
                for (state, count) in [("in_use", pool.inUse), ("idle", pool.idle), ("waiting", pool.waiting)] {
                    registry.makeGauge(name: "latchkey_database_pool_connections", labels: [("state", state)])
                        .set(Double(count))
                }
                registry.makeGauge(name: "latchkey_database_pool_limit").set(Double(pool.limit))
            }
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16_384)
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// What the store says at a scrape: counts no event updates (they change by time passing too).
package struct StoreGauges: Sendable, Equatable {
    /// Sessions not ended and not expired.
    package var activeSessions: Int
    /// Data-deletion requests waiting for an operator (`queue`).
    package var deletionsReceived: Int
    /// Data-deletion requests whose job has not finished.
    package var deletionsInProgress: Int
    /// Background jobs due now (revocations, deletions), not leased.
    package var jobsDue: Int
    /// The connection pool, for a backend that has one.
    package var pool: PoolUsage?

    /// Creates the gauges.
    package init(
        activeSessions: Int, deletionsReceived: Int, deletionsInProgress: Int, jobsDue: Int, pool: PoolUsage? = nil
    ) {
        self.activeSessions = activeSessions
        self.deletionsReceived = deletionsReceived
        self.deletionsInProgress = deletionsInProgress
        self.jobsDue = jobsDue
        self.pool = pool
    }
}

/// A connection pool's state at a scrape.
package struct PoolUsage: Sendable, Equatable {
    /// Connections lent to operations.
    package var inUse: Int
    /// Connections open and free.
    package var idle: Int
    /// Operations waiting for a connection.
    package var waiting: Int
    /// The most connections the pool opens (`LATCHKEY_DATABASE_POOL_SIZE`).
    package var limit: Int

    /// Creates a usage.
    package init(inUse: Int, idle: Int, waiting: Int, limit: Int) {
        self.inUse = inUse
        self.idle = idle
        self.waiting = waiting
        self.limit = limit
    }
}
