import Foundation
import LatchkeyCrypto

extension ServerConfiguration {
    /// Every setting, each declared once, in the order they are read (a setting whose default
    /// depends on another comes after it) and documented.
    package static let settings: [Setting] =
        [
            Setting(
                "LATCHKEY_HOST", group: .http, default: "`127.0.0.1`",
                meaning: "where to listen"
            ) { name, reader, configuration in
                if let value = reader.value(name) { configuration.host = value }
            },
            Setting(
                "LATCHKEY_PORT", group: .http, default: "`8080`",
                meaning: "where to listen"
            ) { name, reader, configuration in
                if let number = try reader.integer(name) { configuration.port = number }
            },
            Setting(
                "LATCHKEY_PUBLIC_URL", group: .http, default: "`http://HOST:PORT`",
                meaning:
                    "the URL clients use; `iss` of access tokens (required when binding 0.0.0.0). Keep it fixed: after a change, access tokens issued under the old URL get 401 until the app refreshes"
            ) { name, reader, configuration in
                configuration.publicURL = reader.value(name)
            },
            Setting(
                "LATCHKEY_MAX_BODY_BYTES", group: .http, default: "`65536`",
                meaning: "request body limit"
            ) { name, reader, configuration in
                if let number = try reader.integer(name) { configuration.maximumBodySize = number }
            },
            Setting(
                "LATCHKEY_REQUEST_TIMEOUT", group: .http, default: "`10`",
                meaning: "seconds a client may take to send a request's body after its head"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.requestTimeout = number }
            },
            Setting(
                "LATCHKEY_FIRST_REQUEST_TIMEOUT", group: .http, default: "`10`",
                meaning:
                    "seconds a new connection may take to send its first request's head (partial bytes do not extend it; at most the idle timeout)"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.firstRequestTimeout = number }
            },
            Setting(
                "LATCHKEY_IDLE_TIMEOUT", group: .http, default: "`75`",
                meaning:
                    "seconds a keep-alive connection may wait for its next request's head after a response (partial bytes do not extend it)"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.idleTimeout = number }
            },
            Setting(
                "LATCHKEY_MAX_CONNECTIONS", group: .http, default: "`4096`",
                meaning:
                    "open connections at once; beyond, new ones are closed and a warning logged (keep under `ulimit -n`)"
            ) { name, reader, configuration in
                if let number = try reader.integer(name) { configuration.maximumConnections = number }
            },
            Setting(
                "LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS", group: .http, default: "`64`",
                meaning:
                    "open connections at once from one TCP peer address (IPv6: one /64); beyond, new ones are closed at once (`0`: no cap). Connections from `LATCHKEY_TRUSTED_PROXIES` count only against `LATCHKEY_MAX_CONNECTIONS`"
            ) { name, reader, configuration in
                if let number = try reader.integer(name) { configuration.maximumConnectionsPerAddress = number }
            },
            Setting(
                "LATCHKEY_TRUSTED_PROXIES", group: .http, default: "(none)",
                meaning:
                    "CIDR networks of reverse proxies whose forwarding header names the client; IPv6 clients count by /64"
            ) { name, reader, configuration in
                if let networks = reader.list(name) { configuration.trustedProxies = networks }
            },
            Setting(
                "LATCHKEY_FORWARDED_HEADER", group: .http, default: "`x-forwarded-for`",
                meaning:
                    "the one header those proxies write the client into: `x-forwarded-for` or `forwarded` (the other is ignored: a proxy passes it through as the client sent it)"
            ) { name, reader, configuration in
                if let header = reader.value(name) { configuration.forwardedHeader = header.lowercased() }
            },
            Setting(
                "LATCHKEY_DATABASE_URL", group: .database, default: "`latchkey-data/latchkey.sqlite`",
                meaning:
                    "SQLite path, `sqlite:PATH`, `file:PATH` or `sqlite::memory:`; or PostgreSQL, `postgres://user:password@host:5432/db?sslmode=verify-full` (`disable`, `require`, `verify-full`; default `verify-full`, `disable` on a literal loopback address such as `127.0.0.1`, not the name `localhost`; also `sslrootcert`, `connect_timeout`, `options`, `application_name`). See docs/deployment.md"
            ) { name, reader, configuration in
                if let url = reader.value(name) { configuration.databaseURL = url }
            },
            Setting(
                "LATCHKEY_DATABASE_POOL_SIZE", group: .database, default: "`10`",
                meaning:
                    "PostgreSQL: the most connections one server holds (every server holds its own: keep their sum under `max_connections`)"
            ) { name, reader, configuration in
                if let number = try reader.integer(name) { configuration.databasePoolSize = number }
            },
            Setting(
                "LATCHKEY_DATABASE_TIMEOUT", group: .database, default: "`5`",
                meaning:
                    "PostgreSQL: seconds an operation waits for a connection and its answer before the request gets 503 `unavailable` with `Retry-After`"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.databaseTimeout = number }
            },
            Setting(
                "LATCHKEY_FACEBOOK_APP_ID", group: .facebook, default: "(required)",
                meaning: "app id(s), comma-separated; the first is the default"
            ) { name, reader, configuration in
                try Self.readApps(reader, &configuration)
            },
            Setting(
                "LATCHKEY_FACEBOOK_APP_SECRET", group: .facebook, default: "(required)",
                meaning: "secret(s), same order (one secret for all is accepted)"
            ) { name, reader, configuration in
                _ = (reader, configuration)  // read with LATCHKEY_FACEBOOK_APP_ID, which it pairs with
            },
            Setting(
                "LATCHKEY_FACEBOOK_GRAPH_URL", group: .facebook, default: "`https://graph.facebook.com/v21.0`",
                meaning: "Graph base"
            ) { name, reader, configuration in
                if let url = reader.value(name) { configuration.graphURL = url }
            },
            Setting(
                "LATCHKEY_FACEBOOK_JWKS_URL", group: .facebook,
                default: "`https://www.facebook.com/.well-known/oauth/openid/jwks/`",
                meaning: "Limited Login keys"
            ) { name, reader, configuration in
                if let url = reader.value(name) { configuration.jwksURL = url }
            },
            Setting(
                "LATCHKEY_FACEBOOK_ISSUERS", group: .facebook, default: "`https://www.facebook.com`",
                meaning: "accepted `iss` (add `https://facebook.com` for the legacy issuer)"
            ) { name, reader, configuration in
                if let issuers = reader.list(name) { configuration.issuers = issuers }
            },
            Setting(
                "LATCHKEY_FACEBOOK_DIALOG_URL", group: .facebook,
                default: "`https://www.facebook.com/v21.0/dialog/oauth`",
                meaning: "login dialog (Easy Login)"
            ) { name, reader, configuration in
                if let url = reader.value(name) { configuration.dialogURL = url }
            },
            Setting(
                "LATCHKEY_FACEBOOK_TIMEOUT", group: .facebook, default: "`5`",
                meaning: "seconds per Facebook call"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.facebookTimeout = number }
            },
            Setting(
                "LATCHKEY_FACEBOOK_MAX_CONNECTIONS", group: .facebook, default: "`256`",
                meaning: "keep-alive connections to Facebook at once (two per classic login in flight)"
            ) { name, reader, configuration in
                if let number = try reader.integer(name) { configuration.facebookMaxConnections = number }
            },
            Setting(
                "LATCHKEY_FACEBOOK_MAX_IN_FLIGHT", group: .facebook, default: "`256`",
                meaning: "Graph calls in flight at once; beyond, a sign-in gets a fast 503"
            ) { name, reader, configuration in
                if let number = try reader.integer(name) { configuration.facebookMaxInFlight = number }
            },
            Setting(
                "LATCHKEY_FACEBOOK_REJECTION_TTL", group: .facebook, default: "`60`",
                meaning: "seconds a token Facebook refused is refused again without a Graph call (`0`: off)"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.facebookRejectionLifetime = number }
            },
            Setting(
                "LATCHKEY_FACEBOOK_USAGE_WARN_PERCENT", group: .facebook, default: "`80`",
                meaning:
                    "Graph usage Facebook reports (`X-App-Usage`, percent of the app's hourly limit) past which a warning is logged; `/ready` shows the last report"
            ) { name, reader, configuration in
                if let number = try reader.integer(name) { configuration.facebookUsageWarningPercent = number }
            },
            Setting(
                "LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT", group: .facebook, default: "`95`",
                meaning:
                    "usage past which Latchkey tightens its own limits to keep the app out of Facebook's throttle: refused tokens are remembered at least 10 minutes (even with the TTL at `0`), app tokens are refused without a call, and classic sign-ins per address and per /48 and Easy Login starts per address drop to a quarter of their limits ([docs/security.md](docs/security.md))"
            ) { name, reader, configuration in
                if let number = try reader.integer(name) { configuration.facebookUsageTightenPercent = number }
            },
            Setting(
                "LATCHKEY_FACEBOOK_STARTUP_CHECK", group: .facebook,
                default: "`before-start` (`background` in `--dev`)",
                meaning:
                    "when to ask Facebook whether it accepts the app credentials: `before-start`, `background` or `off`"
            ) { name, reader, configuration in
                if let check = try reader.choice(name, FacebookStartupCheck.self, "before-start, background or off") {
                    configuration.facebookStartupCheck = check
                }
            },
            Setting(
                "LATCHKEY_JWKS_REFETCH_INTERVAL", group: .facebook, default: "`60`",
                meaning: "least seconds between JWKS fetches for unknown kids"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.jwksRefetchInterval = number }
            },
            Setting(
                "LATCHKEY_ID_TOKEN_MAX_AGE", group: .signIn, default: "`600`",
                meaning: "seconds after its `iat` a Limited Login id token is still accepted"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.idTokenMaxAge = number }
            },
            Setting(
                "LATCHKEY_CLOCK_SKEW", group: .signIn, default: "`60`",
                meaning:
                    "seconds of clock difference tolerated: Facebook's id tokens (`iat`, `exp`), and Easy Login requests sealed by another server (at most 600)"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.clockSkew = number }
            },
            Setting(
                "LATCHKEY_ALLOW_MISSING_NONCE", group: .signIn, default: "`false`",
                meaning: "accept id tokens without a nonce"
            ) { name, reader, configuration in
                if let allow = try reader.flag(name) { configuration.allowMissingNonce = allow }
            },
            Setting(
                "LATCHKEY_REQUIRE_SERVER_NONCE", group: .signIn, default: "`false`",
                meaning: "require `/v1/auth/nonce` nonces"
            ) { name, reader, configuration in
                if let require = try reader.flag(name) { configuration.requireServerNonce = require }
            },
            Setting(
                "LATCHKEY_NONCE_TTL", group: .signIn, default: "`600`",
                meaning: "seconds a `/v1/auth/nonce` nonce stays usable"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.nonceLifetime = number }
            },
            Setting(
                "LATCHKEY_LIMITED_LOGIN_NONCE", group: .signIn, default: "`hashed`",
                meaning:
                    "how a Limited Login token's `nonce` claim matches the nonce sent: `hashed` (the claim is its SHA-256 hex, as the SDK and Firebase do; an intercepted token alone signs nobody in), `raw` (the claim is the nonce itself; needs `LATCHKEY_REQUIRE_SERVER_NONCE=true`), `either` (while apps move over). docs/security.md says what each protects against"
            ) { name, reader, configuration in
                if let mode = try reader.choice(
                    name, IDTokenPolicy.NonceMatching.self, "hashed, raw or either", lowercased: true)
                {
                    configuration.limitedLoginNonce = mode
                }
            },
            Setting(
                "LATCHKEY_DEFAULT_FIELDS_MAPPING", group: .users,
                default: "`name=name,first_name=firstName,last_name=lastName,email=email,picture=picture`",
                meaning: "used when a request has none"
            ) { name, reader, configuration in
                try Self.readDefaultMapping(reader, &configuration)
            },
            Setting(
                "LATCHKEY_CLIENT_MAPPABLE_PROPERTIES", group: .users, default: "the default mapping's properties",
                meaning: "properties a client's `fieldsMapping` may target (`*`: any valid name)"
            ) { name, reader, configuration in
                // After the default mapping, whose properties are the default.
                if let names = reader.list(name) {
                    configuration.clientMappableProperties = names == ["*"] ? nil : Set(names)
                } else {
                    configuration.clientMappableProperties = Set(configuration.defaultFieldsMapping.values)
                }
            },
            Setting(
                "LATCHKEY_USER_WRITABLE_PROPERTIES", group: .users, default: "(none)",
                meaning: "properties `PATCH /v1/users/me` may change"
            ) { name, reader, configuration in
                if let names = reader.list(name) { configuration.userWritableProperties = Set(names) }
            },
            Setting(
                "LATCHKEY_REFRESH_PROPERTIES_ON_LOGIN", group: .users, default: "`true`",
                meaning: "re-apply the mapping on every login"
            ) { name, reader, configuration in
                if let refresh = try reader.flag(name) { configuration.refreshPropertiesOnLogin = refresh }
            },
            Setting(
                "LATCHKEY_OAUTH_CLIENTS", group: .easyLogin, default: "(none: Easy Login off)",
                meaning:
                    "Easy Login clients, `client_id=redirect_uri` entries, comma-separated, one per redirect URI (`ios=myapp://auth,ios=http://127.0.0.1/callback`). `http` only for loopback IPs, which match on any port; no fragments or user info"
            ) { name, reader, configuration in
                try Self.readOAuthClients(reader, &configuration)
            },
            Setting(
                "LATCHKEY_EASY_LOGIN_TTL", group: .easyLogin, default: "`600`",
                meaning: "seconds a person may spend on Facebook's dialog"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.easyLoginRequestLifetime = number }
            },
            Setting(
                "LATCHKEY_AUTHORIZATION_CODE_TTL", group: .easyLogin, default: "`60`",
                meaning: "seconds an Easy Login code stays redeemable (at most 600)"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.authorizationCodeLifetime = number }
            },
            Setting(
                "LATCHKEY_EASY_LOGIN_MAX_PENDING", group: .easyLogin, default: "unset",
                meaning:
                    "deprecated, no longer used: Easy Login stores no request before Facebook's answer, so there is nothing to cap. Still accepted, so existing configurations start; a server given it logs `latchkey.settings.deprecated`"
            ) { name, reader, configuration in
                if let number = try reader.integer(name) { configuration.easyLoginMaximumPending = number }
            },
            Setting(
                "LATCHKEY_ACCESS_TOKEN_TTL", group: .sessions, default: "`900`",
                meaning: "seconds an access token is valid"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.accessTokenLifetime = number }
            },
            Setting(
                "LATCHKEY_REFRESH_TOKEN_TTL", group: .sessions, default: "`2592000`",
                meaning: "seconds a refresh token (and so an unused session) lives; each refresh starts it again"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.refreshTokenLifetime = number }
            },
            Setting(
                "LATCHKEY_REFRESH_RETRY_WINDOW", group: .sessions, default: "`10`",
                meaning:
                    "seconds after a refresh during which the same refresh token, sent again (the app lost the answer), gets the same new refresh token instead of revoking the session; `0` turns it off (0 to 300)"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.refreshRetryWindow = number }
            },
            Setting(
                "LATCHKEY_KEY_REFRESH_INTERVAL", group: .sessions, default: "`60`",
                meaning:
                    "seconds between two reads of the session signing keys, so a key added by `latchkey keys rotate` reaches every running server (0.1 to 3600)"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.keyRefreshInterval = number }
            },
            Setting(
                "LATCHKEY_KEY_ACTIVATION_DELAY", group: .sessions, default: "`600`",
                meaning:
                    "seconds a new signing key is only published before servers sign with it: at least twice the refresh interval, and longer than app backends cache the JWKS (5 minutes)"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.keyActivationDelay = number }
            },
            Setting(
                "LATCHKEY_KEY_ENCRYPTION_KEY", group: .secrets, default: "(required outside `--dev`)",
                meaning:
                    "32 random bytes, base64 or hex (`latchkey keys generate-kek`): seals session signing keys at rest"
            ) { name, reader, configuration in
                if let raw = reader.value(name) { configuration.keyEncryptionKey = try KeyEncryptionKey(encoded: raw) }
            },
            Setting(
                "LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS", group: .secrets, default: "(none)",
                meaning:
                    "earlier key-encryption keys; keys sealed under them are sealed again under the current one on start"
            ) { name, reader, configuration in
                if let keys = reader.list(name) {
                    configuration.previousKeyEncryptionKeys = try keys.map {
                        try KeyEncryptionKey(encoded: $0, setting: name)
                    }
                }
            },
            Setting(
                "LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS", group: .secrets, default: "`false` (`true` in `--dev`)",
                meaning: "run without a key-encryption key, storing signing keys unencrypted"
            ) { name, reader, configuration in
                if let allow = try reader.flag(name) { configuration.allowPlaintextSigningKeys = allow }
            },
            Setting(
                "LATCHKEY_AUDIT_RETENTION", group: .maintenance, default: "`7776000` (90 days)",
                meaning: "seconds audit events are kept before the pruner deletes them"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.auditRetention = number }
            },
            Setting(
                "LATCHKEY_PRUNE_INTERVAL", group: .maintenance, default: "`300`",
                meaning:
                    "seconds between two background prunes of expired nonces, `jti`s, Easy Login requests and codes, ended sessions and old audit events (1 to 86400)"
            ) { name, reader, configuration in
                if let number = try reader.seconds(name) { configuration.pruneInterval = number }
            },
        ] + limitSettings

    /// The abuse limits, from their own table (`AbuseLimitRules.settings`), so a new limit
    /// cannot be left out: one was, and its setting was silently ignored.
    static let limitSettings: [Setting] = AbuseLimitRules.settings.map { limit in
        let rule = AbuseLimitRules()[keyPath: limit.keyPath]
        return Setting(
            limit.setting, group: .limits, default: "`\(rule.map(\.description) ?? "off")`",
            meaning: limitMeanings[limit.setting] ?? ""
        ) { name, reader, configuration in
            // Looked up here, not captured: a key path is not `Sendable`.
            guard let raw = reader.value(name),
                let limit = AbuseLimitRules.settings.first(where: { $0.setting == name })
            else { return }
            configuration.abuseLimits[keyPath: limit.keyPath] = try RateRule.parse(raw, name: limit.rule, setting: name)
        }
    }

    /// Each limit's default and meaning (a test holds every limit to having both).
    /// Each limit's meaning; its default is the rule itself (`AbuseLimitRules()`), printed as the
    /// setting takes it. A test holds every limit to having one.
    static let limitMeanings: [String: String] = [
        "LATCHKEY_LIMIT_SIGN_IN_PER_ADDRESS":
            "sign-ins per client address, as `N/SECONDS` (or `off`); each classic attempt spends two Graph calls of the app's Facebook rate limit",
        "LATCHKEY_LIMIT_SIGN_IN_PER_NETWORK":
            "sign-ins per IPv6 /48 (one site's 65,536 /64s together); IPv4 has no aggregate",
        "LATCHKEY_LIMIT_SIGN_IN_PER_IDENTITY":
            "sign-ins of one Facebook identity, on every path (classic, Limited Login, Easy Login)",
        "LATCHKEY_LIMIT_TOKEN_PER_ADDRESS":
            "failed grants at `POST /v1/oauth/token` per client address (a success gives its count back)",
        "LATCHKEY_LIMIT_REFRESH_PER_SESSION":
            "refreshes of one session (refresh-token family), checked before the token is spent",
        "LATCHKEY_LIMIT_NONCE_PER_ADDRESS":
            "`POST /v1/auth/nonce` per client address",
        "LATCHKEY_LIMIT_AUTHORIZE_PER_ADDRESS":
            "`GET /v1/oauth/authorize` per client address (refused requests go back to the app as `temporarily_unavailable`)",
        "LATCHKEY_LIMIT_CALLBACK_PER_ADDRESS":
            "Easy Login's Facebook callback per client address, counted before its state is opened (each may write the state's single use); beyond, a 429 page",
    ]

    /// `LATCHKEY_FACEBOOK_APP_ID` with `LATCHKEY_FACEBOOK_APP_SECRET`: one secret per app id, in
    /// the same order, or one for all.
    static func readApps(_ reader: SettingReader, _ configuration: inout ServerConfiguration) throws {
        let ids = reader.list("LATCHKEY_FACEBOOK_APP_ID") ?? []
        let secrets = reader.list("LATCHKEY_FACEBOOK_APP_SECRET") ?? []
        guard !ids.isEmpty else { return }
        guard secrets.count == ids.count || secrets.count == 1 else {
            throw ConfigurationError(
                "LATCHKEY_FACEBOOK_APP_SECRET needs one secret per app id in LATCHKEY_FACEBOOK_APP_ID (comma-separated, same order)"
            )
        }
        configuration.facebookApps = ids.enumerated().map { index, id in
            FacebookApp(id: id, secret: secrets.count == 1 ? secrets[0] : secrets[index])
        }
    }

    /// `LATCHKEY_DEFAULT_FIELDS_MAPPING`: `field=property` entries.
    static func readDefaultMapping(_ reader: SettingReader, _ configuration: inout ServerConfiguration) throws {
        let name = "LATCHKEY_DEFAULT_FIELDS_MAPPING"
        guard let pairs = reader.list(name) else { return }
        var mapping: [String: String] = [:]
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else {
                throw ConfigurationError(
                    "\(name) entries look like field=property, not \(reader.shown(name, pair))")
            }
            mapping[parts[0]] = parts[1]
        }
        configuration.defaultFieldsMapping = mapping
    }

    /// `LATCHKEY_OAUTH_CLIENTS`: `client_id=redirect_uri` entries.
    static func readOAuthClients(_ reader: SettingReader, _ configuration: inout ServerConfiguration) throws {
        let name = "LATCHKEY_OAUTH_CLIENTS"
        guard let entries = reader.list(name) else { return }
        do {
            configuration.oauthClients = try OAuthClient.parse(entries)
        } catch let error as ConfigurationError where reader.fromFiles.contains(name) {
            _ = error  // its text quotes the file
            throw ConfigurationError("\(name)_FILE does not hold valid entries (client_id=redirect_uri, one a line)")
        }
    }
}
