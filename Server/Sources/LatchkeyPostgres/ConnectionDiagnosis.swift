import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Why operations get no connection at run time: PostgreSQL refusing connections (stopped,
/// restarting), the host not answering, a password changed under the server.
///
/// Why: the pool keeps a failed connection attempt's cause to itself, so an operation that got no
/// connection only knew its time ran out, and said "no answer within 2.0 seconds", which reads as
/// a slow database, not a stopped one. When an operation's time runs out before it got a
/// connection, one connection of our own is tried outside the pool (as at start,
/// `firstConnection`), at most one at a time and one every few seconds, and its cause is logged
/// (`latchkey.database.unreachable`) and named by the following refusals.
final class ConnectionDiagnosis: Sendable {
    /// How long a cause is named after it was found: the database may be back since.
    static let causeLifetime: Duration = .seconds(30)
    /// The least time between two tries.
    static let interval: Duration = .seconds(5)

    private struct State {
        var cause: (text: String, at: ContinuousClock.Instant)?
        var lastTry: ContinuousClock.Instant?
        var running: Task<Void, Never>?
    }

    private let state = Mutex(State())
    private let settings: PostgresConnection.Configuration
    private let logger: Logger

    init(settings: PostgresConnection.Configuration, logger: Logger) {
        var settings = settings
        // A try must end well within the interval, whatever the network does.
        settings.options.connectTimeout = min(settings.options.connectTimeout, .seconds(2))
        self.settings = settings
        self.logger = logger
    }

    /// The cause found within `causeLifetime`, if any.
    var recentCause: String? {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard let cause = state.cause, now - cause.at < Self.causeLifetime else { return nil }
            return cause.text
        }
    }

    /// Starts a try unless one is under way or the last was less than `interval` ago; the try
    /// under way (or just started), for tests to wait on.
    @discardableResult
    func diagnose() -> Task<Void, Never>? {
        let now = ContinuousClock.now
        return state.withLock { state -> Task<Void, Never>? in
            if let running = state.running { return running }
            if let last = state.lastTry, now - last < Self.interval { return nil }
            state.lastTry = now
            let task = Task { [self] in
                let cause = await Self.attempt(settings)
                self.state.withLock { done in
                    done.cause = cause.map { ($0, ContinuousClock.now) }
                    done.running = nil
                }
                if let cause {
                    logger.error("latchkey.database.unreachable", metadata: ["latchkey.database.cause": "\(cause)"])
                }
            }
            state.running = task
            return task
        }
    }

    /// What one connection attempt says: `nil` when it connected (the database answers; the pool
    /// is busy or the network slow), else its cause in words, never the password.
    static func attempt(_ settings: PostgresConnection.Configuration) async -> String? {
        do {
            let connection = try await PostgresConnection.connect(
                on: PostgresStore.eventLoops.any(), configuration: settings, id: 0, logger: PostgresStore.quiet)
            try? await connection.close()
            return nil
        } catch {
            if let refused = PostgresStore.refusal(error) { return refused.description }
            let cause = PostgresStore.cause(error)
            if cause.localizedCaseInsensitiveContains("refused") {
                return
                    "PostgreSQL refuses connections at \(settings.endpointText) (stopped, or not listening there): \(cause)"
            }
            return "no connection to PostgreSQL at \(settings.endpointText): \(cause)"
        }
    }
}

extension PostgresConnection.Configuration {
    /// `host:port`, for a log line.
    fileprivate var endpointText: String {
        if let host, let port { return "\(host):\(port)" }
        return host ?? "the configured address"
    }
}
