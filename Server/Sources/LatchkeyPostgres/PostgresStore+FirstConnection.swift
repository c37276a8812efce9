import Foundation
import LatchkeyServer
import NIOCore
import NIOSSL
import PostgresNIO

/// PostgreSQL turned the connection away for a reason waiting cannot fix: a wrong password or
/// user, a database that does not exist, no permission to connect, no TLS where the URL asks
/// for it, a certificate that does not verify.
package struct PostgresConnectionRefused: Error, Sendable, CustomStringConvertible {
    /// Why, in PostgreSQL's words where it gave them; never the password.
    package let reason: String
    /// PostgreSQL's SQLSTATE, when the server refused (28P01: the password, 3D000: no such
    /// database).
    package let sqlState: String?

    /// For the operator.
    package var description: String {
        "PostgreSQL refused the connection: \(reason)" + (sqlState.map { " [\($0)]" } ?? "")
    }
}

extension PostgresStore {
    /// Opens one connection outside the pool, and closes it: what a server's start and every
    /// `db` command do before the migration.
    ///
    /// Why: the pool keeps a failed connection attempt's cause to itself. Given a wrong password
    /// or database name, an operation waited until the pool's circuit breaker tripped, a minute,
    /// and then reported only that (`connectionCreationCircuitBreakerTripped`). Here a refusal
    /// that waiting cannot fix ends the start at once with PostgreSQL's reason; a database not
    /// answering yet (starting, restarting, unreachable) is retried until `waiting` has passed,
    /// and then reported with the last attempt's cause.
    func firstConnection(waiting: Duration) async throws {
        var configuration = firstConnectionSettings
        let connectTimeout = configuration.options.connectTimeout
        let clock = ContinuousClock()
        let deadline = clock.now + waiting
        var pause: Duration = .milliseconds(100)
        var attempts = 0
        while true {
            attempts += 1
            // No attempt outlasts the wait: a host that drops packets holds one for the whole
            // connect timeout.
            let left = max(deadline - clock.now, .milliseconds(100))
            configuration.options.connectTimeout = min(connectTimeout, TimeAmount(left))
            do {
                let connection = try await PostgresConnection.connect(
                    on: Self.eventLoops.any(), configuration: configuration, id: 0, logger: Self.quiet)
                try? await connection.close()
                return
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if let refused = Self.refusal(error) { throw refused }
                if attempts == 1 {
                    logger.warning(
                        "latchkey.database.waiting",
                        metadata: ["latchkey.database.cause": "\(Self.cause(error))"])
                }
                guard clock.now + pause < deadline else {
                    throw StoreUnavailable(
                        "no connection within \(waiting) (\(attempts) attempts); the last: \(Self.cause(error))")
                }
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(2))
            }
        }
    }

    /// `pool`'s settings for one connection of our own: the pool's configuration does not give
    /// back the TLS it holds, hence `url` and `tls`.
    static func firstConnectionSettings(
        url: PostgresURL, tls: TLSConfiguration?, pool: PostgresClient.Configuration
    ) throws -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: try tls.map { .require(try NIOSSLContext(configuration: $0)) } ?? .disable)
        configuration.options.connectTimeout = TimeAmount(pool.options.connectTimeout)
        configuration.options.tlsServerName = pool.options.tlsServerName
        configuration.options.requireBackendKeyData = pool.options.requireBackendKeyData
        configuration.options.additionalStartupParameters = pool.options.additionalStartupParameters
        return configuration
    }

    /// The refusal in `error`, when waiting cannot change it.
    static func refusal(_ error: any Error) -> PostgresConnectionRefused? {
        if let error = error as? NIOSSLError {
            switch error {
            // The peer closed the connection during the handshake: a server restarting or
            // crashing, a proxy failing over. Without TLS the same is retried.
            case .uncleanShutdown, .handshakeFailed(.sslError([.eofDuringHandshake])),
                .handshakeFailed(.sslError([.eofDuringAdditionalCertficiateChainValidation])):
                return nil
            default:
                return .init(reason: tlsReason(String(describing: error)), sqlState: nil)
            }
        }
        // The certificate names another host, or the host is not a valid server name.
        if let error = error as? NIOSSLExtraError {
            guard error == .failedToValidateHostname else { return .init(reason: "TLS: \(error)", sqlState: nil) }
            return .init(
                reason:
                    "TLS: the server's certificate does not name the host in LATCHKEY_DATABASE_URL: connect by a name "
                    + "the certificate holds, such as the one the provider gives (\(error))", sqlState: nil)
        }
        guard let error = error as? PSQLError else { return nil }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "\(error.code)"
            // Retried: connection exceptions (08, which PgBouncer also sends while its server
            // logins fail), too many connections (53), the server starting or shutting down
            // (57P). Anything else is the URL's or the database's setup: the user or its
            // password (28), no such database (3D000), no permission (42501), a bad `options`.
            // PgBouncer 1.18 sends 08P01 for its own refusals too: those it words as below.
            if state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P") {
                guard state == "08P01", Self.poolerRefusals.contains(where: message.hasPrefix) else { return nil }
            }
            return .init(reason: message, sqlState: state)
        case .sslUnsupported:
            return .init(
                reason: "the server offers no TLS, which the URL's sslmode asks for (sslmode=disable to connect "
                    + "without it, on a network you trust)", sqlState: nil)
        case .receivedUnencryptedDataAfterSSLRequest:
            return .init(reason: "the server answered the request for TLS in plain text", sqlState: nil)
        case .authMechanismRequiresPassword:
            return .init(reason: "the server asks for a password, and the URL has none", sqlState: nil)
        case .unsupportedAuthMechanism, .saslError:
            return .init(reason: "authentication: \(String(reflecting: error.code))", sqlState: nil)
        case .connectionError, .failedToAddSSLHandler:
            return error.underlying.flatMap { refusal($0) }
        default:
            return nil
        }
    }

    /// What an operator reads for a TLS failure: for a certificate no trusted authority signed,
    /// what to do about it, since managed databases sign theirs with a private CA and BoringSSL's
    /// own words (`CERTIFICATE_VERIFY_FAILED`) say nothing of `sslrootcert`.
    static func tlsReason(_ description: String) -> String {
        guard description.contains("CERTIFICATE_VERIFY_FAILED") else { return "TLS: \(description)" }
        return "TLS: the server's certificate is not signed by an authority this machine trusts. A managed "
            + "database signs it with its provider's own CA: download that CA's PEM file and add "
            + "sslrootcert=/path/to/ca.pem to LATCHKEY_DATABASE_URL (with sslmode=verify-full), docs/deployment.md "
            + "(\(description))"
    }

    /// How PgBouncer words, under 08P01, a refusal waiting cannot fix (seen with PgBouncer 1.18 in
    /// front of the test cluster): a startup parameter it does not know (Latchkey sends
    /// `statement_timeout` and others, docs/deployment.md), a wrong password, an unknown database
    /// or user.
    static let poolerRefusals = [
        "unsupported startup parameter", "password authentication failed", "no such database", "no such user",
        "SASL authentication failed",
    ]

    /// A failed attempt's cause, for the operator: the driver's own description of its errors
    /// hides everything, and a server's refusal never holds the password.
    static func cause(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] {
            return "\(message) [\(error.serverInfo?[.sqlState] ?? "")]"
        }
        return error.underlying.map { "\($0)" } ?? String(reflecting: error.code)
    }
}
