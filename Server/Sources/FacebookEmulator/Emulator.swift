import AsyncHTTPClient
import Hummingbird
import LatchkeyAPI
import Logging
import NIOCore

/// Builds the Facebook emulator as a Hummingbird application: the same call serves the CLI
/// (`latchkey emulator`), in-process tests (HummingbirdTesting, port 0) and `latchkey serve --dev`.
///
/// - Parameters:
///   - configuration: apps, people, clock and limits; validated here, before anything binds.
///   - logger: where requests that fail unexpectedly are logged (never tokens or secrets).
///   - onServerRunning: called with the bound channel, e.g. to print the port chosen for port 0.
/// - Returns: an application to run with `runService()` or inside a `ServiceGroup`.
/// - Throws: `EmulatorConfigurationError` for a bad configuration or seed.
public func buildEmulator(
    configuration: EmulatorConfiguration,
    logger: Logger = Logger(label: "facebook-emulator"),
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    try configuration.validate()
    let state = try EmulatorState(configuration: configuration)
    let responder = EmulatorResponder(
        endpoints: EmulatorEndpoints(state: state, httpClient: HTTPClient.shared, logger: logger),
        publicURL: configuration.publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 },
        maximumBodySize: configuration.maximumBodySize,
        logger: logger)
    return Application(
        responder: responder,
        server: .http1(configuration: .init(idleTimeout: .milliseconds(Int64(configuration.idleTimeout * 1000)))),
        configuration: .init(
            address: .hostname(configuration.host, port: configuration.port), serverName: "facebook-emulator"),
        onServerRunning: onServerRunning,
        logger: logger)
}

/// The id `personKey` has in the app `appID`: the same value `/me`, `debug_token`, id tokens and
/// signed requests report, so tools and tests can predict it.
public func appScopedUserID(appID: String, personKey: String) -> String {
    EmulatorState.appScopedID(appID: appID, personKey: personKey)
}

/// The Sign in with Apple `sub` of `personKey` for the team `teamID`: `000123.<32 hex>.0456`,
/// the same for every bundle id and Services id of the team (Apple scopes it to the team), so
/// tools and tests can predict it.
public func appleSubject(teamID: String, personKey: String) -> String {
    AppleIdentity.subject(teamID: teamID, personKey: personKey)
}
