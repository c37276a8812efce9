import Foundation

/// How a `LatchkeyClient` reaches its server and keeps its tokens.
public struct LatchkeyConfiguration: Sendable {
    /// The Latchkey server, e.g. `https://auth.example.com`.
    public var serverURL: URL
    /// The Facebook app id (for building Facebook login configurations and dialog URLs).
    public var facebookAppID: String
    /// Where tokens persist across launches. One client per process and store (see ``CredentialStore``).
    public var credentialStore: any CredentialStore
    /// Refresh this long before the access token expires.
    public var refreshLeeway: TimeInterval
    /// How requests reach the server (`URLSessionTransport` with `import Latchkey`).
    public var transport: any LatchkeyTransport
    /// The clock; tests inject one.
    public var clock: @Sendable () -> Date
    /// Easy Login: the app's OAuth client id on the server (`LATCHKEY_OAUTH_CLIENTS`).
    public var oauthClientID: String?
    /// Easy Login: where the server sends the person back, e.g. `myapp://auth` (a URL scheme the
    /// app declares) or a loopback URL on a desktop.
    public var redirectURI: String?
    /// Keeps the app running while a refresh saves its answer (``BackgroundWork``); `nil` asks for
    /// nothing. With `import Latchkey` on iOS, tvOS and visionOS, `URLSessionTransport`'s
    /// configuration sets it to the system's background tasks.
    public var backgroundWork: (any BackgroundWork)?
    /// Receives what the client does (sign-ins, refreshes, sessions ending, store failures), for the
    /// app's own logging; events never carry a token. `nil` logs nothing.
    public var log: (@Sendable (LatchkeyLogEvent) -> Void)?

    /// Creates a configuration over any transport; `import Latchkey` adds one that takes a
    /// `URLSession` (by default `.shared`).
    public init(
        serverURL: URL, facebookAppID: String, credentialStore: any CredentialStore = InMemoryCredentialStore(),
        refreshLeeway: TimeInterval = 60, transport: any LatchkeyTransport,
        clock: @escaping @Sendable () -> Date = { Date() }, oauthClientID: String? = nil, redirectURI: String? = nil,
        backgroundWork: (any BackgroundWork)? = nil, log: (@Sendable (LatchkeyLogEvent) -> Void)? = nil
    ) {
        self.backgroundWork = backgroundWork
        self.oauthClientID = oauthClientID
        self.redirectURI = redirectURI
        self.serverURL = serverURL
        self.facebookAppID = facebookAppID
        self.credentialStore = credentialStore
        self.refreshLeeway = refreshLeeway
        self.transport = transport
        self.clock = clock
        self.log = log
    }
}

/// One thing a `LatchkeyClient` did, for the app's logs (``LatchkeyConfiguration/log``).
public struct LatchkeyLogEvent: Sendable, CustomStringConvertible {
    /// How much it matters.
    public enum Level: String, Sendable, Comparable, CaseIterable {
        /// Routine steps (a refresh started).
        case debug
        /// Lifecycle milestones (signed in, signed out).
        case info
        /// Something failed that the app may want to know about (a refresh failed, the store failed).
        case warning

        /// Orders levels by severity, as declared.
        public static func < (lhs: Level, rhs: Level) -> Bool {
            allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
        }
    }

    /// How much it matters.
    public let level: Level
    /// What happened, in English; never contains a token.
    public let message: String
    /// The error's code, when the event is a failure.
    public let code: LatchkeyError.Code?

    /// Creates an event (the SDK makes these; public for tests of an app's log handler).
    public init(level: Level, message: String, code: LatchkeyError.Code? = nil) {
        self.level = level
        self.message = message
        self.code = code
    }

    /// `level: message [code]`.
    public var description: String { "\(level.rawValue): \(message)" + (code.map { " [\($0)]" } ?? "") }
}
