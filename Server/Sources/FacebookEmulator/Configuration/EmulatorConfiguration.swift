import Foundation
import LatchkeyAPI

/// Everything an emulator instance needs; a value, so tests build one per case.
public struct EmulatorConfiguration: Sendable {
    /// Address to bind. Loopback by default: the control API must not be reachable from elsewhere.
    public var host: String
    /// Port to bind; 0 picks a free one (tests).
    public var port: Int
    /// The base URL that discovery documents, picture URLs and test-user login URLs point at.
    /// `nil` derives it from each request's `Host` header, which is right behind port 0.
    public var publicURL: String?
    /// The `iss` of id tokens and the discovery document.
    public var issuer: String
    /// Apps, people and keys to start with.
    public var seed: EmulatorSeed
    /// Lifetime of tokens from a code exchange and `fb_exchange_token` (Facebook: about 60 days).
    public var longLivedTokenLifetime: TimeInterval
    /// Data-access lifetime reported by `debug_token` (Facebook: 90 days).
    public var dataAccessLifetime: TimeInterval
    /// Lifetime of authorization codes (Facebook's is undocumented; about ten minutes).
    public var codeLifetime: TimeInterval
    /// The wall clock; the emulator adds its own offset, moved through the control API.
    public var clock: @Sendable () -> Date
    /// Largest request body accepted, in bytes.
    public var maximumBodySize: Int
    /// Seconds before an idle connection is closed; above the usual 60 s client pool timeout, so
    /// clients close first and never send on a connection the server is closing.
    public var idleTimeout: TimeInterval
    /// The Sign in with Apple team this emulator also plays Apple for (`/auth/keys`, `/auth/token`,
    /// `/auth/revoke`); `nil` leaves those paths unknown, as a Facebook-only emulator.
    public var apple: AppleRegistration?

    /// Creates a configuration with Facebook's defaults.
    public init(
        host: String = "127.0.0.1", port: Int = 8090, publicURL: String? = nil,
        issuer: String = "https://www.facebook.com", seed: EmulatorSeed = .demo,
        longLivedTokenLifetime: TimeInterval = 5_184_000, dataAccessLifetime: TimeInterval = 7_776_000,
        codeLifetime: TimeInterval = 600, clock: @escaping @Sendable () -> Date = { Date() },
        maximumBodySize: Int = 1 << 20, idleTimeout: TimeInterval = 75, apple: AppleRegistration? = nil
    ) {
        self.host = host
        self.port = port
        self.publicURL = publicURL
        self.issuer = issuer
        self.seed = seed
        self.longLivedTokenLifetime = longLivedTokenLifetime
        self.dataAccessLifetime = dataAccessLifetime
        self.codeLifetime = codeLifetime
        self.clock = clock
        self.maximumBodySize = maximumBodySize
        self.idleTimeout = idleTimeout
        self.apple = apple
    }

    /// Refuses a configuration that would fail later, with a message naming the setting.
    public func validate() throws {
        guard (0...65_535).contains(port) else { throw EmulatorConfigurationError("port \(port) is out of range") }
        guard !host.isEmpty else { throw EmulatorConfigurationError("host must not be empty") }
        if let publicURL {
            guard let url = URL(string: publicURL), url.scheme == "http" || url.scheme == "https", url.host != nil
            else { throw EmulatorConfigurationError("public URL '\(publicURL)' must be an absolute http(s) URL") }
        }
        guard let issuerURL = URL(string: issuer), issuerURL.scheme != nil, issuerURL.host != nil else {
            throw EmulatorConfigurationError("issuer '\(issuer)' must be an absolute URL")
        }
        for (name, value) in [
            ("long-lived token lifetime", longLivedTokenLifetime), ("data access lifetime", dataAccessLifetime),
            ("code lifetime", codeLifetime),
        ] where value <= 0 {
            throw EmulatorConfigurationError("\(name) must be positive")
        }
        guard idleTimeout > 0 else { throw EmulatorConfigurationError("idle timeout must be positive") }
        guard maximumBodySize >= 1024 else { throw EmulatorConfigurationError("maximum body size must be ≥ 1024") }
        try seed.validate()
        try apple?.validate()
    }
}
