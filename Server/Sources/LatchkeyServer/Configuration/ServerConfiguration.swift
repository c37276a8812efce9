import Foundation
import HTTPTypes
import LatchkeyCrypto
import NIOCore

/// Everything the server needs, with production defaults pointing at the real Facebook.
///
/// Filled from `LATCHKEY_…` settings (`init(settings:)`), which the CLI builds from its flags, the
/// environment and an optional file, in that order of precedence.
package struct ServerConfiguration: Sendable {
    /// A Facebook app whose users may sign in. Its description and mirror leave the secret out,
    /// so printing or logging an app (or anything holding one) cannot leak it.
    package struct FacebookApp: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// The numeric app id.
        package var id: String
        /// The app secret (app token `id|secret`, `appsecret_proof`, signed requests).
        package var secret: String
        /// Creates an app.
        package init(id: String, secret: String) {
            self.id = id
            self.secret = secret
        }

        /// The app id, the secret redacted.
        package var description: String { "FacebookApp(id: \(id), secret: <redacted>)" }
        /// The same as `description`.
        package var debugDescription: String { description }
        /// The id only.
        package var customMirror: Mirror { Mirror(self, children: ["id": id, "secret": "<redacted>"]) }
    }

    /// Listening, connections and requests.
    package var http = HTTPSettings()
    /// Where data is stored.
    package var database = DatabaseSettings()
    /// Facebook's endpoints, the app credentials, and how Latchkey calls Facebook.
    package var facebook = FacebookSettings()
    /// Verifying a sign-in: id tokens and nonces.
    package var signIn = SignInSettings()
    /// The user properties a sign-in maps and apps may write.
    package var users = UserSettings()
    /// Easy Login (OAuth 2.0 with Facebook as the login page).
    package var easyLogin = EasyLoginSettings()
    /// Sign in with Apple: the app's ids, the team's key, Apple's endpoints.
    package var apple = AppleSettings()
    /// Guests, linking, merging and account deletion.
    package var identities = IdentitySettings()
    /// A second factor: TOTP authenticators, recovery codes and challenges.
    package var secondFactor = SecondFactorSettings()
    /// Sessions, their tokens and their signing keys.
    package var sessions = SessionSettings()
    /// Secrets at rest.
    package var secrets = SecretSettings()
    /// Abuse limits (429 `rate_limited` with `Retry-After`).
    package var limits = AbuseLimitRules()
    /// Background work.
    package var maintenance = MaintenanceSettings()
    /// The admin API's listener, logs and metrics.
    package var operations = OperationsSettings()
    /// Settings read from a `NAME_FILE`: their values are never quoted in errors.
    var settingsFromFiles: Set<String> = []
    /// The clock; tests inject a fixed one.
    package var clock: @Sendable () -> Date = { Date() }

    /// Creates a configuration with defaults.
    package init() {}

    /// How long after a session signing key stopped signing an Easy Login request it sealed may
    /// come back: the request's lifetime, the clock skew, and the grace in which an expired one is
    /// still reported to its app (`SessionKeyRing.requestKeys`).
    var sealedRequestWindow: TimeInterval {
        easyLogin.requestLifetime + signIn.clockSkew + PruneCutoffs.pendingAuthorizationGrace
    }

    /// Where Facebook's dialog sends the person back to this server (register it with the Facebook app).
    package var facebookCallbackURL: String { http.resolvedPublicURL + Self.facebookCallbackPath }

    /// The path of the Facebook callback route.
    package static let facebookCallbackPath = "/v1/oauth/facebook/callback"

    /// Where Facebook posts a deauthorize callback (the app's "Deauthorize callback URL").
    package var facebookDeauthorizeURL: String { http.resolvedPublicURL + Self.facebookDeauthorizePath }

    /// The path of the deauthorize callback route.
    package static let facebookDeauthorizePath = "/v1/facebook/deauthorize"

    /// Where Facebook posts a data-deletion callback (the app's "Data deletion request URL").
    package var facebookDataDeletionURL: String { http.resolvedPublicURL + Self.facebookDataDeletionPath }

    /// The path of the data-deletion callback route; its status pages are below it.
    package static let facebookDataDeletionPath = "/v1/facebook/data-deletion"

    /// Refuses a configuration that cannot work, naming the setting to fix. Each group checks
    /// its own settings; every rule that relates two settings relates two of one group.
    package func validate() throws {
        try facebook.validate(shown)
        try http.validate(shown)
        try signIn.validate()
        try sessions.validate()
        try easyLogin.validate()
        try identities.validate()
        try secondFactor.validate()
        try apple.validate(shown)
        try users.validate()
        try maintenance.validate()
        try operations.validate()
        try database.validate()
        try secrets.validate()
    }

    /// Refuses `url` unless it is an absolute http(s) URL.
    static func validateHTTPURL(_ name: String, _ url: String, _ shown: (String, String) -> String) throws {
        guard let parsed = URL(string: url), parsed.scheme == "http" || parsed.scheme == "https", parsed.host != nil
        else { throw ConfigurationError("\(name) \(shown(name, url)) must be an absolute http(s) URL") }
    }

    /// Refuses a lifetime that is not positive or is beyond ten years.
    static func validateLifetime(_ name: String, _ seconds: TimeInterval) throws {
        guard seconds > 0, seconds <= 10 * 365 * 86_400 else {
            throw ConfigurationError("\(name) must be a positive number of seconds")
        }
    }
}

/// A configuration problem, reported before the server binds.
package struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What to fix.
    package let description: String
    init(_ description: String) { self.description = description }
}
