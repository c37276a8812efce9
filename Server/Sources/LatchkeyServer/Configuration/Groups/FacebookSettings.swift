import Foundation

extension ServerConfiguration {
    /// Facebook's endpoints, the app credentials, and how Latchkey calls Facebook
    /// (`Setting.Group.facebook`). Defaults point at the real Facebook.
    package struct FacebookSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.facebook
        /// The Facebook apps served; the first is the default.
        package var apps: [FacebookApp] = []
        /// Graph API base, with or without a version (`https://graph.facebook.com/v21.0`).
        package var graphURL: String = "https://graph.facebook.com/v21.0"
        /// Limited Login keys.
        package var jwksURL: String = "https://www.facebook.com/.well-known/oauth/openid/jwks/"
        /// Accepted `iss` values for id tokens.
        package var issuers: [String] = ["https://www.facebook.com"]
        /// Facebook's login dialog (Easy Login).
        package var dialogURL: String = "https://www.facebook.com/v21.0/dialog/oauth"
        /// Upper bound on each Facebook call, seconds; beyond it the client gets 503
        /// `facebook_unavailable`.
        package var timeout: TimeInterval = 5
        /// Most keep-alive connections to Facebook at once (per host): logins in flight × 2.
        package var maximumConnections: Int = 256
        /// Most Graph calls in flight at once; beyond, a sign-in gets a fast 503 instead of
        /// queueing (`LATCHKEY_FACEBOOK_MAX_IN_FLIGHT`).
        package var maximumInFlight: Int = 256
        /// Seconds a token Facebook refused is refused again without asking
        /// (`LATCHKEY_FACEBOOK_REJECTION_TTL`; 0 turns it off).
        package var rejectionLifetime: TimeInterval = 60
        /// Facebook-reported Graph usage (`X-App-Usage`, percent of the app's hourly limit) past
        /// which a warning is logged (`LATCHKEY_FACEBOOK_USAGE_WARN_PERCENT`).
        package var usageWarningPercent: Int = 80
        /// Usage past which Latchkey tightens its own limits so the app stays out of Facebook's
        /// throttle (`LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT`; see `FacebookUsageMonitor`).
        package var usageTightenPercent: Int = 95
        /// When Facebook is asked whether it accepts each app's id and secret.
        package var startupCheck: FacebookStartupCheck = .beforeStart
        /// Least time between two JWKS fetches caused by an unknown `kid`, seconds.
        package var jwksRefetchInterval: TimeInterval = 60
        /// `LATCHKEY_FACEBOOK_JOIN_BY_BUSINESS`; `nil` (unset) means on when several apps are served.
        package var joinByBusiness: Bool? = nil
        /// Seconds after its `issued_at` a deauthorize or data-deletion callback's
        /// `signed_request` is still accepted (`LATCHKEY_SIGNED_REQUEST_MAX_AGE`).
        package var signedRequestMaxAge: TimeInterval = 86_400
        /// What a deauthorize callback ends (`LATCHKEY_DEAUTHORIZE_ENDS`).
        package var deauthorizeEnds: DeauthorizeScope = .identitySessions
        /// What a data-deletion callback does (`LATCHKEY_DATA_DELETION_POLICY`).
        package var dataDeletionPolicy: DeletionPolicy = .delete

        /// Whether a new identity joins the user another app of the same business already knows
        /// (`token_for_business`): on by default when several apps are served, since one person
        /// then has several app-scoped ids.
        var joinsByBusiness: Bool { joinByBusiness ?? (apps.count > 1) }

        /// The Graph base, trailing slash removed.
        var graphBase: String { graphURL.hasSuffix("/") ? String(graphURL.dropLast()) : graphURL }

        /// The app with `id`, if served.
        func app(_ id: String) -> FacebookApp? { apps.first { $0.id == id } }

        /// Refuses values that cannot work, naming the setting; `shown` quotes a value for the
        /// error (or only where it came from, for a `_FILE`).
        func validate(_ shown: (String, String) -> String) throws {
            guard !apps.isEmpty else {
                throw ConfigurationError("LATCHKEY_FACEBOOK_APP_ID is required (one or more Facebook app ids)")
            }
            for app in apps {
                guard !app.id.isEmpty, app.id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                    throw ConfigurationError(
                        "Facebook app id \(shown("LATCHKEY_FACEBOOK_APP_ID", app.id)) must be numeric")
                }
                guard !app.secret.isEmpty else {
                    throw ConfigurationError("LATCHKEY_FACEBOOK_APP_SECRET is required for app \(app.id)")
                }
            }
            for (name, url) in [
                ("LATCHKEY_FACEBOOK_GRAPH_URL", graphURL), ("LATCHKEY_FACEBOOK_JWKS_URL", jwksURL),
                ("LATCHKEY_FACEBOOK_DIALOG_URL", dialogURL),
            ] {
                try ServerConfiguration.validateHTTPURL(name, url, shown)
            }
            guard !issuers.isEmpty else {
                throw ConfigurationError("LATCHKEY_FACEBOOK_ISSUERS must name at least one issuer")
            }
            try ServerConfiguration.validateLifetime("LATCHKEY_FACEBOOK_TIMEOUT", timeout)
            guard (1...10_000).contains(maximumConnections) else {
                throw ConfigurationError("LATCHKEY_FACEBOOK_MAX_CONNECTIONS must be between 1 and 10000")
            }
            // One sign-in's calls: two with one app; with several, `/app` and up to a `debug_token` each.
            let callsPerSignIn = apps.count <= 1 ? 2 : apps.count + 2
            guard maximumInFlight >= callsPerSignIn, maximumInFlight <= 100_000 else {
                throw ConfigurationError(
                    "LATCHKEY_FACEBOOK_MAX_IN_FLIGHT must be at least \(callsPerSignIn), the Graph calls of one sign-in"
                )
            }
            guard signedRequestMaxAge >= 60, signedRequestMaxAge <= 30 * 86_400 else {
                throw ConfigurationError("LATCHKEY_SIGNED_REQUEST_MAX_AGE must be between 60 seconds and 30 days")
            }
            guard rejectionLifetime >= 0, rejectionLifetime <= 3600 else {
                throw ConfigurationError("LATCHKEY_FACEBOOK_REJECTION_TTL must be between 0 and 3600 seconds")
            }
            guard (1...1000).contains(usageWarningPercent), (1...1000).contains(usageTightenPercent),
                usageWarningPercent <= usageTightenPercent
            else {
                throw ConfigurationError(
                    "LATCHKEY_FACEBOOK_USAGE_WARN_PERCENT and LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT must be between 1 and 1000, the warning no higher"
                )
            }
        }
    }
}

/// Which sessions a provider's deauthorization ends (`LATCHKEY_DEAUTHORIZE_ENDS`).
package enum DeauthorizeScope: String, Sendable, CaseIterable {
    /// The sessions the identity opened, and those whose opener is unknown (opened before
    /// Latchkey recorded it): a person signed in through another provider stays signed in.
    case identitySessions = "identity-sessions"
    /// Every session of the user.
    case allSessions = "all-sessions"
}
