import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import Logging
import NIOCore
import NIOHTTP1

/// Builds the Latchkey server: the same call serves `latchkey serve`, `serve --dev` and tests.
/// The application runs the `PruningService` beside the HTTP server.
///
/// - Parameters:
///   - configuration: validated here, before anything binds.
///   - store: the database, already opened (and migrated here).
///   - httpClient: the one pooled client for every Facebook call (keep-alive across logins).
///   - logger: request logs never contain tokens or secrets.
///   - onServerRunning: called with the bound channel (e.g. to learn the port chosen for port 0).
public func buildApplication(
    configuration: ServerConfiguration,
    store: any LatchkeyStore,
    httpClient: HTTPClient = .shared,
    logger: Logger = Logger(label: "latchkey"),
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    try configuration.validate()
    try await store.migrate()
    let keys = try await SessionKeyRing.load(
        from: store, now: configuration.clock(), accessTokenLifetime: configuration.accessTokenLifetime)
    let timeout = configuration.facebookTimeout
    let origin = ServerOrigin(configuration)
    let graph = GraphClient(client: httpClient, base: configuration.graphBase, timeout: timeout)
    let tokens = SessionTokens(
        keys: keys, origin: origin, accessTokenLifetime: configuration.accessTokenLifetime,
        refreshTokenLifetime: configuration.refreshTokenLifetime)
    let keySet = KeySetCache(
        client: httpClient, url: configuration.jwksURL, timeout: timeout,
        refetchInterval: configuration.jwksRefetchInterval, clock: configuration.clock)
    let classic = AccessTokenVerifier(graph: graph, apps: configuration.facebookApps, clock: configuration.clock)
    let signIn = SignInService(
        configuration: configuration, store: store, classic: classic,
        limited: LimitedLoginVerifier(keys: keySet, configuration: configuration), tokens: tokens)
    let easyLogin = EasyLoginService(
        configuration: configuration, store: store, graph: graph, classic: classic, tokens: tokens, origin: origin)
    let router = Router(context: BasicRequestContext.self)
    router.add(middleware: ErrorMiddleware())
    Routes(
        configuration: configuration, store: store, signIn: signIn, tokens: tokens, easyLogin: easyLogin,
        origin: origin,
        reading: RequestReading(maximumBodySize: configuration.maximumBodySize)
    ).register(on: router)
    return Application(
        router: router,
        server: .http1(configuration: .init(idleTimeout: .seconds(75))),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "latchkey"),
        services: [PruningService(store: store, configuration: configuration, logger: logger)],
        onServerRunning: { channel in
            origin.bound(to: channel.localAddress)
            await onServerRunning(channel)
        },
        logger: logger)
}
