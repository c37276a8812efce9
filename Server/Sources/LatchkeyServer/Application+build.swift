import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import LatchkeyCrypto
import Logging
import NIOCore
import NIOHTTP1

/// Builds the Latchkey server: the same call serves `latchkey serve`, `serve --dev` and tests.
/// The application runs the `PruningService` and the `SessionKeyRefresher` beside the HTTP server.
///
/// - Parameters:
///   - configuration: validated here, before anything binds.
///   - store: the database, already opened (and migrated here).
///   - httpClient: the one pooled client for every Facebook call (keep-alive across logins).
///   - logger: request logs never contain tokens or secrets.
///   - rateLimiter: where abuse limits count (in this process by default; shared for many nodes).
///   - onServerRunning: called with the bound channel (e.g. to learn the port chosen for port 0).
package func buildApplication(
    configuration: ServerConfiguration,
    store: any LatchkeyStore,
    httpClient: HTTPClient = .shared,
    logger: Logger = Logger(label: "latchkey"),
    rateLimiter: any RateLimiter = InProcessRateLimiter(),
    metrics: ServerMetrics = ServerMetrics(),
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
    onAdminServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    try await buildApplication(
        configuration: configuration, store: store, httpClient: httpClient, logger: logger, rateLimiter: rateLimiter,
        metrics: metrics, routeTable: RouteTable(), onServerRunning: onServerRunning,
        onAdminServerRunning: onAdminServerRunning)
}

/// `buildApplication`, filling `routeTable` with the routes the router has once they are all
/// registered: the contract test reads them there.
func buildApplication(
    configuration: ServerConfiguration,
    store: any LatchkeyStore,
    httpClient: HTTPClient = .shared,
    logger: Logger = Logger(label: "latchkey"),
    rateLimiter: any RateLimiter = InProcessRateLimiter(),
    metrics: ServerMetrics = ServerMetrics(),
    routeTable table: RouteTable,
    adminRouteTable adminTable: RouteTable = RouteTable(),
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
    onAdminServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    try configuration.validate()
    store.observation.attach(metrics)
    try await store.migrate()
    let protection = SigningKeyProtection(configuration)
    let (ring, resealed) = try await SessionKeyRing.load(
        from: store, protection: protection, now: configuration.clock(),
        accessTokenLifetime: configuration.sessions.accessTokenLifetime,
        activationDelay: configuration.sessions.keyActivationDelay,
        sealedRequestWindow: configuration.sealedRequestWindow)
    let keys = SessionKeys(ring)
    if resealed > 0 {
        logger.notice("latchkey.keys.sealed", metadata: ["latchkey.keys.count": .stringConvertible(resealed)])
    }
    if protection.current == nil {
        logger.warning("latchkey.keys.plaintext", metadata: ["latchkey.setting": "LATCHKEY_KEY_ENCRYPTION_KEY_FILE"])
    }
    // Allowed while apps move from raw to hashed nonces, but it takes an intercepted id token sent
    // with its own claim as the nonce, unless the nonce must also be a server nonce, spent once.
    if configuration.signIn.limitedLoginNonce == .either, !configuration.signIn.requireServerNonce {
        logger.warning(
            "latchkey.limited_login.nonce_either",
            metadata: [
                "latchkey.setting": "LATCHKEY_LIMITED_LOGIN_NONCE",
                "latchkey.error.hint":
                    "either takes an intercepted, unused id token sent with its own claim as the nonce; use it only while apps move to hashed nonces, or with LATCHKEY_REQUIRE_SERVER_NONCE=true",
            ])
    }
    // Allowed (tests, a single server whose apps do not cache the JWKS), but an app backend that
    // cached the JWKS (`max-age=300`) before a new key was published would meet tokens it cannot
    // verify until its cache expires.
    if configuration.sessions.keyActivationDelay < SessionKeyRing.jwksMaxAge + configuration.sessions.keyRefreshInterval
    {
        logger.warning(
            "latchkey.keys.activation_before_jwks_cache",
            metadata: [
                "latchkey.setting": "LATCHKEY_KEY_ACTIVATION_DELAY",
                "latchkey.keys.activation_delay": .stringConvertible(configuration.sessions.keyActivationDelay),
                "latchkey.keys.jwks_max_age": .stringConvertible(Int(SessionKeyRing.jwksMaxAge)),
            ])
    }
    if configuration.easyLogin.maximumPending != nil {
        logger.warning(
            "latchkey.settings.deprecated",
            metadata: [
                "latchkey.setting": "LATCHKEY_EASY_LOGIN_MAX_PENDING",
                "latchkey.settings.reason": "Easy Login stores no request before the callback; nothing to cap",
            ])
    }
    let timeout = configuration.facebook.timeout
    let origin = ServerOrigin(configuration)
    let health = FacebookHealth()
    let usage = FacebookUsageMonitor(
        warningPercent: configuration.facebook.usageWarningPercent,
        tightenPercent: configuration.facebook.usageTightenPercent, clock: configuration.clock, logger: logger)
    let graph = GraphClient(
        client: httpClient, base: configuration.facebook.graphBase, timeout: timeout, health: health, usage: usage,
        metrics: metrics)
    // The check bounds its wait to 10 s whatever LATCHKEY_FACEBOOK_TIMEOUT says: a start should
    // not hang on an unreachable Facebook, which the background monitor handles.
    let check = FacebookCredentialCheck(
        graph: GraphClient(
            client: httpClient, base: configuration.facebook.graphBase, timeout: min(timeout, 10), health: health,
            usage: usage, metrics: metrics),
        health: health)
    let unchecked = try await checkFacebookCredentials(configuration: configuration, check: check, logger: logger)
    let tokens = SessionTokens(
        keys: keys, origin: origin, accessTokenLifetime: configuration.sessions.accessTokenLifetime,
        refreshTokenLifetime: configuration.sessions.refreshTokenLifetime)
    let keySet = KeySetCache(
        client: httpClient, url: configuration.facebook.jwksURL, timeout: timeout,
        refetchInterval: configuration.facebook.jwksRefetchInterval, clock: configuration.clock, metrics: metrics)
    let classic = AccessTokenVerifier(
        graph: graph, apps: configuration.facebook.apps, health: health, clock: configuration.clock,
        budget: FacebookCallBudget(maximum: configuration.facebook.maximumInFlight),
        rejections: RejectedTokenCache(lifetime: configuration.facebook.rejectionLifetime))
    let limits = AbuseLimits(
        rules: configuration.limits, limiter: rateLimiter,
        trustedProxies: configuration.http.trustedProxies.compactMap(ClientAddress.Network.init),
        forwardedHeader: ClientAddress.ForwardedHeader(rawValue: configuration.http.forwardedHeader) ?? .xForwardedFor,
        clock: configuration.clock, facebookUsage: usage, refusals: RefusalLog(logger: logger))
    let recorder = SignInRecorder(
        store: store, business: BusinessTokenLookup(graph: graph, apps: configuration.facebook.apps, logger: logger),
        joinsByBusiness: configuration.facebook.joinsByBusiness)
    let secondFactor = SecondFactorService(
        configuration: configuration, store: store, tokens: tokens,
        sealing: FactorSecretSealing(protection: protection), metrics: metrics)
    let signIn = SignInService(
        configuration: configuration, store: store, classic: classic,
        limited: LimitedLoginVerifier(keys: keySet, configuration: configuration), tokens: tokens, limits: limits,
        recorder: recorder, secondFactor: secondFactor, metrics: metrics)
    let easyLogin = EasyLoginService(
        configuration: configuration, store: store, graph: graph, classic: classic, tokens: tokens, origin: origin,
        limits: limits, recorder: recorder, secondFactor: secondFactor, metrics: metrics)
    let appleHealth = AppleHealth(enabled: configuration.apple.isEnabled)
    let appleClient = AppleClient(
        configuration: configuration, client: httpClient, health: appleHealth, logger: logger, metrics: metrics)
    let appleKeys = KeySetCache(
        client: httpClient, url: configuration.apple.base + "/auth/keys", timeout: configuration.apple.timeout,
        refetchInterval: configuration.facebook.jwksRefetchInterval, clock: configuration.clock, provider: "apple",
        metrics: metrics,
        unavailable: { APIError.appleUnavailable("Apple's signing keys could not be fetched.", cause: $0) })
    let sealing = ProviderTokenSealing(protection: protection)
    let apple = AppleSignInService(
        configuration: configuration, store: store,
        verifier: AppleIDTokenVerifier(keys: appleKeys, configuration: configuration), apple: appleClient,
        sealing: sealing, tokens: tokens, limits: limits, facebook: signIn)
    let router = Router(context: LatchkeyRequestContext.self)
    addMiddleware(
        to: router, table: table, configuration: configuration, limits: limits, metrics: metrics, logger: logger)
    Routes(
        configuration: configuration, store: store, signIn: signIn, tokens: tokens, easyLogin: easyLogin,
        origin: origin, health: health, usage: usage, apple: apple,
        appleNotifications: AppleNotificationService(
            configuration: configuration, store: store, keys: appleKeys, logger: logger),
        appleHealth: appleHealth,
        facebookCallbacks: FacebookCallbackService(
            configuration: configuration, store: store, origin: origin, logger: logger),
        limits: limits,
        reading: RequestReading(maximumBodySize: configuration.http.maximumBodySize)
    ).register(on: router)
    let connections = ConnectionCounter(
        maximum: configuration.http.maximumConnections,
        maximumPerAddress: configuration.http.maximumConnectionsPerAddress,
        exempt: limits.trustedProxies, logger: logger)
    // The first head's deadline is never longer than keep-alive idleness: Hummingbird's own idle
    // timeout (below) would cut the connection there anyway.
    let firstHeadTimeout = min(configuration.http.firstRequestTimeout, configuration.http.idleTimeout)
    // Every listener's connections: the same caps, the same deadlines for slow clients.
    let channelHandlers: @Sendable () -> [any RemovableChannelHandler] = {
        [
            ConnectionLimitHandler(counter: connections),
            RequestDeadlineHandler(
                firstHeadTimeout: .milliseconds(Int64(firstHeadTimeout * 1000)),
                headTimeout: .milliseconds(Int64(configuration.http.idleTimeout * 1000)),
                bodyTimeout: .milliseconds(Int64(configuration.http.requestTimeout * 1000)), logger: logger),
        ]
    }
    let admin = AdminController(
        admin: AdminService(configuration: configuration, store: store, protection: protection),
        authentication: AdminAuthentication(store: store, limits: limits, clock: configuration.clock, logger: logger),
        reading: RequestReading(maximumBodySize: configuration.http.maximumBodySize))
    let console = ConsoleController(
        admin: admin.admin,
        console: ConsoleSupport(
            configuration: configuration, authentication: admin.authentication, keys: keys,
            renderer: try ConsoleRenderer()),
        metrics: metrics)
    let scrapes = MetricsController(
        metrics: metrics, store: store, clock: configuration.clock,
        authentication: configuration.operations.adminAddress == nil ? admin.authentication.unaudited : nil)
    let adminApplication = configuration.operations.adminAddress.map { address in
        makeAdminApplication(
            [admin, console, scrapes], address: address, configuration: configuration, limits: limits,
            table: adminTable,
            metrics: metrics, channelHandlers: channelHandlers, logger: logger, onServerRunning: onAdminServerRunning)
    }
    if adminApplication == nil {
        admin.register(on: router)
        console.register(on: router)
        scrapes.register(on: router)
    }
    table.load(router)
    var application = Application(
        router: router,
        server: .http1(
            configuration: .init(
                additionalChannelHandlers: channelHandlers(),
                idleTimeout: .milliseconds(Int64(configuration.http.idleTimeout * 1000)))),
        configuration: .init(
            address: .hostname(configuration.http.host, port: configuration.http.port), serverName: "latchkey"),
        services: [
            PruningService(store: store, configuration: configuration, logger: logger),
            JobService(
                store: store, configuration: configuration,
                revoker: FacebookPermissionRevoker(graph: graph, apps: configuration.facebook.apps, logger: logger),
                appleRevoker: AppleTokenRevoker(apple: appleClient, sealing: sealing, store: store), logger: logger),
            SessionKeyRefresher(
                store: store, protection: protection, keys: keys, configuration: configuration, logger: logger),
        ],
        onServerRunning: { channel in
            origin.bound(to: channel.localAddress)
            await onServerRunning(channel)
        },
        logger: logger)
    if let adminApplication { application.addServices(adminApplication) }
    if let appleClient, configuration.apple.checksCredentials {
        application.addServices(
            CancellingAtShutdown(
                wrapped: AppleCredentialMonitor(
                    apple: appleClient, clientIDs: configuration.apple.clientIDs, logger: logger)))
    }
    if !unchecked.apps.isEmpty {
        application.addServices(
            FacebookCredentialMonitor(
                check: check, apps: unchecked.apps, initialDelay: unchecked.delay, logger: logger))
    }
    return application
}

/// What every listener's router runs around its routes, outermost first: the request's id, access
/// log line and metrics; errors turned into typed answers; the audit context.
private func addMiddleware(
    to router: Router<LatchkeyRequestContext>, table: RouteTable, configuration: ServerConfiguration,
    limits: AbuseLimits, metrics: ServerMetrics, logger: Logger
) {
    router.add(
        middleware: RequestObserver(
            limits: limits, accessLog: configuration.operations.accessLog, logger: logger, metrics: metrics))
    router.add(middleware: ErrorMiddleware(routes: table, metrics: metrics))
    router.add(middleware: AuditContextMiddleware(node: configuration.http.nodeName, limits: limits))
}

/// The admin API and `/metrics` on their own listener (`LATCHKEY_ADMIN_LISTEN`), with the public
/// listener's error answers, request ids and audit context, run as a service beside the public one.
private func makeAdminApplication(
    _ controllers: [any Controller], address: (host: String, port: Int), configuration: ServerConfiguration,
    limits: AbuseLimits, table: RouteTable, metrics: ServerMetrics,
    channelHandlers: @escaping @Sendable () -> [any RemovableChannelHandler], logger: Logger,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void
) -> some ApplicationProtocol {
    let router = Router(context: LatchkeyRequestContext.self)
    addMiddleware(
        to: router, table: table, configuration: configuration, limits: limits, metrics: metrics, logger: logger)
    for controller in controllers { controller.register(on: router) }
    table.load(router)
    return Application(
        router: router,
        server: .http1(
            configuration: .init(
                additionalChannelHandlers: channelHandlers(),
                idleTimeout: .milliseconds(Int64(configuration.http.idleTimeout * 1000)))),
        configuration: .init(address: .hostname(address.host, port: address.port), serverName: "latchkey"),
        onServerRunning: onServerRunning, logger: logger)
}

/// Asks Facebook whether it accepts each app's credentials, as `facebook.startupCheck` says.
///
/// - Returns: the apps to check again in the background, and after how long.
/// - Throws: `ConfigurationError` naming the setting when Facebook refuses an app's secret.
private func checkFacebookCredentials(
    configuration: ServerConfiguration, check: FacebookCredentialCheck, logger: Logger
) async throws -> (apps: [ServerConfiguration.FacebookApp], delay: Duration) {
    switch configuration.facebook.startupCheck {
    case .off:
        return ([], .zero)
    case .background:
        // `serve --dev`: the emulator binds alongside the server, a moment later.
        return (configuration.facebook.apps, .milliseconds(500))
    case .beforeStart:
        var unreachable: [ServerConfiguration.FacebookApp] = []
        for (app, outcome) in await check.check(configuration.facebook.apps) {
            switch outcome {
            case .accepted: break
            case .refused(let reason):
                throw ConfigurationError(
                    """
                    Facebook refused the credentials of app \(app.id) (\(reason)): check \
                    LATCHKEY_FACEBOOK_APP_SECRET (or LATCHKEY_FACEBOOK_APP_SECRET_FILE) and LATCHKEY_FACEBOOK_APP_ID
                    """)
            case .unreachable:
                logger.warning(
                    "latchkey.facebook.unreachable_at_start",
                    metadata: [
                        "latchkey.facebook.app": "\(app.id)",
                        "latchkey.facebook.graph": "\(configuration.facebook.graphBase)",
                    ])
                unreachable.append(app)
            }
        }
        return (unreachable, .seconds(5))
    }
}
