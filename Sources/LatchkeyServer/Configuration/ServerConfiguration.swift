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

    /// Address to bind.
    package var host: String = "127.0.0.1"
    /// Port to bind; 0 picks a free one.
    package var port: Int = 8080
    /// The base URL clients reach the server at; the `iss` of access tokens. Defaults to `http://host:port`.
    package var publicURL: String?
    /// `sqlite:PATH`, a file path, `file:PATH`, or `postgres://user:password@host:port/db?sslmode=…`.
    package var databaseURL: String = "latchkey.sqlite"
    /// PostgreSQL: the most connections one server holds (`LATCHKEY_DATABASE_POOL_SIZE`). Every
    /// server of a deployment holds up to this many, so their sum must stay under the database's
    /// `max_connections`.
    package var databasePoolSize: Int = 10
    /// PostgreSQL: seconds a store operation may wait for a connection and its answer before the
    /// request gets 503 `database_unavailable` (`LATCHKEY_DATABASE_TIMEOUT`).
    package var databaseTimeout: TimeInterval = 5
    /// The Facebook apps served; the first is the default.
    package var facebookApps: [FacebookApp] = []
    /// Graph API base, with or without a version (`https://graph.facebook.com/v21.0`).
    package var graphURL: String = "https://graph.facebook.com/v21.0"
    /// Limited Login keys.
    package var jwksURL: String = "https://www.facebook.com/.well-known/oauth/openid/jwks/"
    /// Accepted `iss` values for id tokens.
    package var issuers: [String] = ["https://www.facebook.com"]
    /// Facebook's login dialog (Easy Login).
    package var dialogURL: String = "https://www.facebook.com/v21.0/dialog/oauth"
    /// Apps allowed to use Easy Login; none by default (the flow is off until one is registered).
    package var oauthClients: [OAuthClient] = []
    /// How long a person may take on Facebook's dialog before the Easy Login request expires, seconds.
    package var easyLoginRequestLifetime: TimeInterval = 600
    /// No longer used (`LATCHKEY_EASY_LOGIN_MAX_PENDING`, deprecated): it capped the Easy Login
    /// requests stored while people were on Facebook's dialog, a cap strangers could fill for
    /// everyone. Requests now travel sealed in Facebook's `state` and nothing is stored, so there is
    /// nothing to cap. Still read, so existing configurations start; a server given it logs
    /// `latchkey.settings.deprecated`.
    package var easyLoginMaximumPending: Int?
    /// Lifetime of Easy Login authorization codes, seconds (RFC 6749 §4.1.2: short; 10 minutes at most).
    package var authorizationCodeLifetime: TimeInterval = 60
    /// Lifetime of access tokens, seconds.
    package var accessTokenLifetime: TimeInterval = 900
    /// Lifetime of refresh tokens (renewed by each rotation), seconds.
    package var refreshTokenLifetime: TimeInterval = 30 * 86_400
    /// Largest accepted age of a Limited Login id token (`now - iat`), seconds. Facebook's SDKs use 600.
    package var idTokenMaxAge: TimeInterval = 600
    /// How long after a session signing key stopped signing an Easy Login request it sealed may
    /// come back: the request's lifetime, the clock skew, and the grace in which an expired one is
    /// still reported to its app (`SessionKeyRing.requestKeys`).
    var sealedRequestWindow: TimeInterval {
        easyLoginRequestLifetime + clockSkew + PruneCutoffs.pendingAuthorizationGrace
    }
    /// Tolerated clock difference with Facebook, seconds.
    package var clockSkew: TimeInterval = 60
    /// Accept id tokens without a nonce (not recommended: replay protection then rests on `jti` only).
    package var allowMissingNonce: Bool = false
    /// Require nonces issued by `POST /v1/auth/nonce`.
    package var requireServerNonce: Bool = false
    /// How a Limited Login token's `nonce` claim must match the nonce sent
    /// (`LATCHKEY_LIMITED_LOGIN_NONCE`): `hashed` by default, so an intercepted id token alone
    /// signs nobody in; `raw` only with server nonces; `either` while apps move over.
    package var limitedLoginNonce: IDTokenPolicy.NonceMatching = .hashed
    /// Lifetime of server-issued nonces, seconds.
    package var nonceLifetime: TimeInterval = 600
    /// Facebook field → property, applied when a request has no mapping.
    package var defaultFieldsMapping: [String: String] = [
        "name": "name", "first_name": "firstName", "last_name": "lastName", "email": "email", "picture": "picture",
    ]
    /// Properties a client may target through `fieldsMapping`; `nil` allows any valid name. By
    /// default only the default mapping's properties, so a client cannot write onto properties the
    /// app or an admin owns.
    package var clientMappableProperties: Set<String>? = ["name", "firstName", "lastName", "email", "picture"]
    /// Properties a signed-in user may change with `PATCH /v1/users/me`.
    package var userWritableProperties: Set<String> = []
    /// Refresh mapped properties on every login, not only the first.
    package var refreshPropertiesOnLogin: Bool = true
    /// Upper bound on each Facebook call, seconds; beyond it the client gets 503 `facebook_unavailable`.
    package var facebookTimeout: TimeInterval = 5
    /// Most keep-alive connections to Facebook at once (per host): logins in flight × 2.
    package var facebookMaxConnections: Int = 256
    /// Least time between two JWKS fetches caused by an unknown `kid`, seconds.
    package var jwksRefetchInterval: TimeInterval = 60
    /// Largest request body, bytes.
    package var maximumBodySize: Int = 64 * 1024
    /// When Facebook is asked whether it accepts each app's id and secret.
    package var facebookStartupCheck: FacebookStartupCheck = .beforeStart
    /// The key session signing keys are sealed under (AES-256-GCM); required unless
    /// `allowPlaintextSigningKeys`.
    package var keyEncryptionKey: KeyEncryptionKey?
    /// Earlier key-encryption keys: keys sealed under them are sealed again under the current one at start.
    package var previousKeyEncryptionKeys: [KeyEncryptionKey] = []
    /// Store session signing keys unencrypted when no key-encryption key is set. Off by default:
    /// anyone who can read the database could then forge a session for any user.
    package var allowPlaintextSigningKeys: Bool = false
    /// How long audit events are kept, seconds; older ones are deleted (`PruningService`). 90 days.
    package var auditRetention: TimeInterval = 90 * 86_400
    /// Time between two prunes of expired records, seconds (`PruningService`). Five minutes.
    package var pruneInterval: TimeInterval = 300
    /// Seconds between two reads of the session signing keys (`SessionKeyRefresher`,
    /// `LATCHKEY_KEY_REFRESH_INTERVAL`): how soon a key added by `latchkey keys rotate` is
    /// published by every running server.
    package var keyRefreshInterval: TimeInterval = 60
    /// Seconds a new session signing key is only published before it signs
    /// (`LATCHKEY_KEY_ACTIVATION_DELAY`): long enough for every server to read it (at least two
    /// refresh intervals) and for app backends caching the JWKS (`max-age=300`) to fetch it.
    package var keyActivationDelay: TimeInterval = 600
    /// Seconds after a refresh during which the same refresh token, presented again, gets the same
    /// new refresh token instead of revoking the session (`LATCHKEY_REFRESH_RETRY_WINDOW`; 0 turns
    /// it off): the app lost the answer to its refresh and retries.
    package var refreshRetryWindow: TimeInterval = 10
    /// Most Graph calls in flight at once; beyond, a sign-in gets a fast 503 instead of queueing
    /// (`LATCHKEY_FACEBOOK_MAX_IN_FLIGHT`).
    package var facebookMaxInFlight: Int = 256
    /// Seconds a token Facebook refused is refused again without asking
    /// (`LATCHKEY_FACEBOOK_REJECTION_TTL`; 0 turns it off).
    package var facebookRejectionLifetime: TimeInterval = 60
    /// Facebook-reported Graph usage (`X-App-Usage`, percent of the app's hourly limit) past
    /// which a warning is logged (`LATCHKEY_FACEBOOK_USAGE_WARN_PERCENT`).
    package var facebookUsageWarningPercent: Int = 80
    /// Usage past which Latchkey tightens its own limits so the app stays out of Facebook's
    /// throttle (`LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT`; see `FacebookUsageMonitor`).
    package var facebookUsageTightenPercent: Int = 95
    /// Longest a client may take to send a request's body after its head, seconds
    /// (`LATCHKEY_REQUEST_TIMEOUT`); a slower connection is closed.
    package var requestTimeout: TimeInterval = 10
    /// Longest a keep-alive connection may wait for its next request's head after a response,
    /// seconds (`LATCHKEY_IDLE_TIMEOUT`): partial bytes do not extend it.
    package var idleTimeout: TimeInterval = 75
    /// Longest a new connection may take to send its first request's head, seconds
    /// (`LATCHKEY_FIRST_REQUEST_TIMEOUT`; at most the idle timeout): a client that connects and
    /// sends nothing is holding a connection, not using it.
    package var firstRequestTimeout: TimeInterval = 10
    /// Most connections open at once; beyond, new ones are closed at once and a warning is logged
    /// (`LATCHKEY_MAX_CONNECTIONS`). Keep it under the process's file-descriptor limit.
    package var maximumConnections: Int = 4096
    /// Most connections open at once from one client address (IPv6: one /64); beyond, new ones are
    /// closed at once (`LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS`; 0 turns it off). Counted on the TCP
    /// peer: connections from `trustedProxies` count only against `maximumConnections`.
    package var maximumConnectionsPerAddress: Int = 64
    /// Abuse limits (429 `rate_limited` with `Retry-After`).
    package var abuseLimits = AbuseLimitRules()
    /// Networks of reverse proxies whose `Forwarded`/`X-Forwarded-For` headers name the client
    /// (CIDR, `LATCHKEY_TRUSTED_PROXIES`); none by default, as any client can send those headers.
    package var trustedProxies: [String] = []
    /// The header those proxies write the client into: `x-forwarded-for` or `forwarded`
    /// (`LATCHKEY_FORWARDED_HEADER`). Only that one is read.
    package var forwardedHeader: String = "x-forwarded-for"
    /// Settings read from a `NAME_FILE`: their values are never quoted in errors.
    var settingsFromFiles: Set<String> = []
    /// The clock; tests inject a fixed one.
    package var clock: @Sendable () -> Date = { Date() }

    /// Creates a configuration with defaults.
    package init() {}

    /// The base URL, trailing slash removed.
    package var resolvedPublicURL: String {
        let url = publicURL ?? "http://\(host):\(port)"
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    /// The Graph base, trailing slash removed.
    var graphBase: String { graphURL.hasSuffix("/") ? String(graphURL.dropLast()) : graphURL }

    /// The app with `id`, if served.
    func app(_ id: String) -> FacebookApp? { facebookApps.first { $0.id == id } }

    /// The Easy Login client with `id`, if registered.
    func oauthClient(_ id: String) -> OAuthClient? { oauthClients.first { $0.id == id } }

    /// Where Facebook's dialog sends the person back to this server (register it with the Facebook app).
    package var facebookCallbackURL: String { resolvedPublicURL + Self.facebookCallbackPath }

    /// The path of the Facebook callback route.
    package static let facebookCallbackPath = "/v1/oauth/facebook/callback"

    /// Refuses a configuration that cannot work, naming the setting to fix.
    package func validate() throws {
        guard !facebookApps.isEmpty else {
            throw ConfigurationError("LATCHKEY_FACEBOOK_APP_ID is required (one or more Facebook app ids)")
        }
        for app in facebookApps {
            guard !app.id.isEmpty, app.id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw ConfigurationError("Facebook app id \(shown("LATCHKEY_FACEBOOK_APP_ID", app.id)) must be numeric")
            }
            guard !app.secret.isEmpty else {
                throw ConfigurationError("LATCHKEY_FACEBOOK_APP_SECRET is required for app \(app.id)")
            }
        }
        if publicURL == nil, ["0.0.0.0", "::", "[::]"].contains(host) {
            throw ConfigurationError(
                "LATCHKEY_PUBLIC_URL is required when LATCHKEY_HOST is a wildcard address: it is the issuer of access tokens"
            )
        }
        guard (0...65_535).contains(port) else { throw ConfigurationError("LATCHKEY_PORT \(port) is out of range") }
        for (name, url) in [
            ("LATCHKEY_FACEBOOK_GRAPH_URL", graphURL), ("LATCHKEY_FACEBOOK_JWKS_URL", jwksURL),
            ("LATCHKEY_FACEBOOK_DIALOG_URL", dialogURL), ("LATCHKEY_PUBLIC_URL", resolvedPublicURL),
        ] {
            guard let parsed = URL(string: url), parsed.scheme == "http" || parsed.scheme == "https", parsed.host != nil
            else { throw ConfigurationError("\(name) \(shown(name, url)) must be an absolute http(s) URL") }
        }
        guard !issuers.isEmpty else {
            throw ConfigurationError("LATCHKEY_FACEBOOK_ISSUERS must name at least one issuer")
        }
        for (name, value) in [
            ("LATCHKEY_ACCESS_TOKEN_TTL", accessTokenLifetime), ("LATCHKEY_REFRESH_TOKEN_TTL", refreshTokenLifetime),
            ("LATCHKEY_ID_TOKEN_MAX_AGE", idTokenMaxAge), ("LATCHKEY_NONCE_TTL", nonceLifetime),
            ("LATCHKEY_FACEBOOK_TIMEOUT", facebookTimeout), ("LATCHKEY_EASY_LOGIN_TTL", easyLoginRequestLifetime),
        ] where !(value > 0 && value <= 10 * 365 * 86_400) {
            throw ConfigurationError("\(name) must be a positive number of seconds")
        }
        guard clockSkew >= 0, clockSkew <= 600 else {
            throw ConfigurationError("LATCHKEY_CLOCK_SKEW must be between 0 and 600 seconds")
        }
        guard (1...10_000).contains(facebookMaxConnections) else {
            throw ConfigurationError("LATCHKEY_FACEBOOK_MAX_CONNECTIONS must be between 1 and 10000")
        }
        guard authorizationCodeLifetime > 0, authorizationCodeLifetime <= 600 else {
            throw ConfigurationError("LATCHKEY_AUTHORIZATION_CODE_TTL must be between 1 and 600 seconds")
        }
        for client in oauthClients { try client.validate() }
        guard Set(oauthClients.map(\.id)).count == oauthClients.count else {
            throw ConfigurationError("LATCHKEY_OAUTH_CLIENTS names a client twice")
        }
        guard maximumBodySize >= 1024 else { throw ConfigurationError("LATCHKEY_MAX_BODY_BYTES must be at least 1024") }
        // Up to a century: a retention far past any record's age behaves as "keep everything".
        guard auditRetention > 0, auditRetention <= 100 * 365 * 86_400 else {
            throw ConfigurationError("LATCHKEY_AUDIT_RETENTION must be a positive number of seconds")
        }
        guard pruneInterval >= 1, pruneInterval <= 86_400 else {
            throw ConfigurationError("LATCHKEY_PRUNE_INTERVAL must be between 1 and 86400 seconds")
        }
        guard keyRefreshInterval >= 0.1, keyRefreshInterval <= 3600 else {
            throw ConfigurationError("LATCHKEY_KEY_REFRESH_INTERVAL must be between 0.1 and 3600 seconds")
        }
        // Two intervals: a server whose one refresh failed has still read the key before it signs.
        guard keyActivationDelay >= 2 * keyRefreshInterval, keyActivationDelay <= 30 * 86_400 else {
            throw ConfigurationError(
                "LATCHKEY_KEY_ACTIVATION_DELAY must be at least twice LATCHKEY_KEY_REFRESH_INTERVAL (and at most 30 days)"
            )
        }
        guard refreshRetryWindow >= 0, refreshRetryWindow <= 300 else {
            throw ConfigurationError("LATCHKEY_REFRESH_RETRY_WINDOW must be between 0 and 300 seconds")
        }
        for (field, property) in defaultFieldsMapping {
            try FieldMapping.validate(field: field, property: property)
        }
        _ = try DatabaseLocation(databaseURL)
        guard (1...1000).contains(databasePoolSize) else {
            throw ConfigurationError("LATCHKEY_DATABASE_POOL_SIZE must be between 1 and 1000")
        }
        guard databaseTimeout >= 0.1, databaseTimeout <= 300 else {
            throw ConfigurationError("LATCHKEY_DATABASE_TIMEOUT must be between 0.1 and 300 seconds")
        }
        // One sign-in's calls: two with one app; with several, `/app` and up to a `debug_token` each.
        let callsPerSignIn = facebookApps.count <= 1 ? 2 : facebookApps.count + 2
        guard facebookMaxInFlight >= callsPerSignIn, facebookMaxInFlight <= 100_000 else {
            throw ConfigurationError(
                "LATCHKEY_FACEBOOK_MAX_IN_FLIGHT must be at least \(callsPerSignIn), the Graph calls of one sign-in")
        }
        guard facebookRejectionLifetime >= 0, facebookRejectionLifetime <= 3600 else {
            throw ConfigurationError("LATCHKEY_FACEBOOK_REJECTION_TTL must be between 0 and 3600 seconds")
        }
        guard (1...1000).contains(facebookUsageWarningPercent), (1...1000).contains(facebookUsageTightenPercent),
            facebookUsageWarningPercent <= facebookUsageTightenPercent
        else {
            throw ConfigurationError(
                "LATCHKEY_FACEBOOK_USAGE_WARN_PERCENT and LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT must be between 1 and 1000, the warning no higher"
            )
        }
        guard requestTimeout > 0, requestTimeout <= 600, idleTimeout > 0, idleTimeout <= 3600 else {
            throw ConfigurationError(
                "LATCHKEY_REQUEST_TIMEOUT (up to 600) and LATCHKEY_IDLE_TIMEOUT (up to 3600) must be positive seconds")
        }
        guard firstRequestTimeout > 0, firstRequestTimeout <= 3600 else {
            throw ConfigurationError("LATCHKEY_FIRST_REQUEST_TIMEOUT must be positive seconds, up to 3600")
        }
        guard (1...1_000_000).contains(maximumConnections) else {
            throw ConfigurationError("LATCHKEY_MAX_CONNECTIONS must be between 1 and 1000000")
        }
        guard (0...1_000_000).contains(maximumConnectionsPerAddress) else {
            throw ConfigurationError("LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS must be between 0 (no cap) and 1000000")
        }
        guard ClientAddress.ForwardedHeader(rawValue: forwardedHeader) != nil else {
            throw ConfigurationError("LATCHKEY_FORWARDED_HEADER must be x-forwarded-for or forwarded")
        }
        for network in trustedProxies where ClientAddress.Network(network) == nil {
            throw ConfigurationError(
                "LATCHKEY_TRUSTED_PROXIES entry \(shown("LATCHKEY_TRUSTED_PROXIES", network)) is not an address or CIDR network"
            )
        }
        if limitedLoginNonce == .raw, !requireServerNonce {
            throw ConfigurationError(
                "LATCHKEY_LIMITED_LOGIN_NONCE=raw needs LATCHKEY_REQUIRE_SERVER_NONCE=true: a raw nonce is the token's own "
                    + "claim, so whoever intercepts the token has it, unless the server issued it and spends it")
        }
        try validateSigningKeyProtection()
    }

    /// Refuses to store session signing keys unencrypted unless that was explicitly allowed; also
    /// checked by the `keys` commands, which need no Facebook settings.
    package func validateSigningKeyProtection() throws {
        if keyEncryptionKey == nil, !allowPlaintextSigningKeys {
            throw ConfigurationError(
                """
                LATCHKEY_KEY_ENCRYPTION_KEY_FILE is required: session signing keys are encrypted at rest under it. \
                Create one with `latchkey keys generate-kek --output FILE`, or set \
                LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS=true to store them unencrypted (anyone who can read the \
                database could then forge sessions)
                """)
        }
    }
}

/// A configuration problem, reported before the server binds.
package struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What to fix.
    package let description: String
    init(_ description: String) { self.description = description }
}
