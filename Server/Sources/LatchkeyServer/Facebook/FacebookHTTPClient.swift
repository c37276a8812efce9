import AsyncHTTPClient
import NIOCore

extension HTTPClient {
    /// The one client for every Facebook call: keep-alive pool sized for concurrent logins. The
    /// default pool (8 connections per host) would cap a server at 4 classic logins in flight,
    /// each waiting a Facebook round trip; measured in docs/performance.md.
    package static func facebook(_ configuration: ServerConfiguration) -> HTTPClient {
        var settings = HTTPClient.Configuration()
        settings.connectionPool = .init(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.facebook.maximumConnections)
        settings.timeout = .init(connect: .seconds(Int64(max(1, configuration.facebook.timeout))))
        // Latchkey bootstraps no tracer; the default no-op one still cost a span and its request
        // attributes per Facebook call (3 % of a classic sign-in, docs/performance.md).
        settings.tracing.tracer = nil
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings)
    }
}
