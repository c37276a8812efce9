import Foundation
@_exported import LatchkeyCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK's default transport: Foundation's `URLSession`.
///
/// `import Latchkey` brings the whole SDK (`LatchkeyCore`, re-exported) with this transport;
/// programs with their own HTTP client import `LatchkeyCore` and bring a `LatchkeyTransport`.
public struct URLSessionTransport: LatchkeyTransport {
    /// The session requests go through.
    public let session: URLSession

    /// A transport over `session`.
    public init(session: URLSession = .shared) { self.session = session }

    /// Sends `request`; any HTTP status is an answer, a failure to get one throws.
    public func send(_ request: LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = request.timeout
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let (data, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return LatchkeyHTTPResponse(status: http.statusCode, body: data)
    }
}

extension LatchkeyConfiguration {
    /// Creates a configuration whose requests go through `urlSession` (by default `.shared`).
    /// - Parameter credentialStore: where the session is kept between launches. By default the
    ///   Keychain on Apple platforms (`.keychain(service: "<bundle identifier>.latchkey")`), so a
    ///   signed-in person stays signed in; elsewhere memory only (`InMemoryCredentialStore`), since
    ///   there is no system secret store to default to: pass a `FileCredentialStore` to persist.
    ///   An app sharing its session with an extension passes `.sharedKeychain(…)` in both.
    /// - Parameter backgroundWork: on iOS, pass `UIApplicationBackgroundWork()` in the app (not in
    ///   an extension), so that a refresh saves its answer before the app is suspended.
    public init(
        serverURL: URL, facebookAppID: String, credentialStore: any CredentialStore = defaultCredentialStore(),
        refreshLeeway: TimeInterval = 60, urlSession: URLSession = .shared,
        clock: @escaping @Sendable () -> Date = { Date() }, oauthClientID: String? = nil, redirectURI: String? = nil,
        backgroundWork: (any BackgroundWork)? = nil, log: (@Sendable (LatchkeyLogEvent) -> Void)? = nil
    ) {
        self.init(
            serverURL: serverURL, facebookAppID: facebookAppID, credentialStore: credentialStore,
            refreshLeeway: refreshLeeway, transport: URLSessionTransport(session: urlSession), clock: clock,
            oauthClientID: oauthClientID, redirectURI: redirectURI, backgroundWork: backgroundWork, log: log)
    }
}

/// The credential store a URLSession configuration uses when given none: the Keychain where there is
/// one (Apple platforms), memory elsewhere. `@usableFromInline` because a default argument calls it.
/// (`canImport(Darwin)` as well: a Linux program must never get a Keychain, real or stand-in.)
@usableFromInline
func defaultCredentialStore() -> any CredentialStore {
    #if canImport(Security) && canImport(Darwin)
    .keychain(service: (appBundleIdentifier() ?? "latchkey") + ".latchkey")
    #else
    InMemoryCredentialStore()
    #endif
}

/// The app's bundle identifier, also inside one of its extensions (whose own bundle, `*.appex`, sits
/// in the app's `PlugIns` folder), so that the default Keychain service names the app either way.
/// Sharing the item also needs an access group: see `CredentialStore.sharedKeychain`.
func appBundleIdentifier(of bundle: Bundle = .main) -> String? {
    guard bundle.bundleURL.pathExtension == "appex" else { return bundle.bundleIdentifier }
    let app = bundle.bundleURL.deletingLastPathComponent().deletingLastPathComponent()
    return Bundle(url: app)?.bundleIdentifier ?? bundle.bundleIdentifier
}

extension IDTokenValidator {
    /// Fetches Facebook's JWKS (or an emulator's) through `session` and builds a validator.
    public static func fetch(
        appID: String, jwksURL: URL, session: URLSession = .shared
    ) async throws(LatchkeyError) -> IDTokenValidator {
        try await fetch(appID: appID, jwksURL: jwksURL, transport: URLSessionTransport(session: session))
    }
}
