import Foundation
import LatchkeyCrypto

extension ServerConfiguration {
    /// Every setting, each declared once, group by group in the order the README lists them
    /// (within a group, a setting whose default depends on another comes after it).
    package static let settings: [Setting] =
        [
            httpSettings, databaseSettings, facebookSettings, signInSettings, usersSettings, easyLoginSettings,
            appleSettings, identitiesSettings, secondFactorSettings, sessionsSettings, secretsSettings,
            maintenanceSettings, limitSettings, operationsSettings,
        ].flatMap(\.self)

    /// Listening, connections and requests.
    static let httpSettings: [Setting] = [
        .text(
            "LATCHKEY_HOST", \.http, \.host, default: "`127.0.0.1`",
            meaning: "where to listen"
        ),
        .integer(
            "LATCHKEY_PORT", \.http, \.port, default: "`8080`",
            meaning: "where to listen"
        ),
        .optionalText(
            "LATCHKEY_PUBLIC_URL", \.http, \.publicURL, default: "`http://HOST:PORT`",
            meaning:
                "the URL clients use; `iss` of access tokens (required when binding 0.0.0.0). Keep it fixed: after a change, access tokens issued under the old URL get 401 until the app refreshes"
        ),
        .integer(
            "LATCHKEY_MAX_BODY_BYTES", \.http, \.maximumBodySize, default: "`65536`",
            meaning: "request body limit"
        ),
        .seconds(
            "LATCHKEY_REQUEST_TIMEOUT", \.http, \.requestTimeout, default: "`10`",
            meaning: "seconds a client may take to send a request's body after its head"
        ),
        .seconds(
            "LATCHKEY_FIRST_REQUEST_TIMEOUT", \.http, \.firstRequestTimeout, default: "`10`",
            meaning:
                "seconds a new connection may take to send its first request's head (partial bytes do not extend it; at most the idle timeout)"
        ),
        .seconds(
            "LATCHKEY_IDLE_TIMEOUT", \.http, \.idleTimeout, default: "`75`",
            meaning:
                "seconds a keep-alive connection may wait for its next request's head after a response (partial bytes do not extend it)"
        ),
        .integer(
            "LATCHKEY_MAX_CONNECTIONS", \.http, \.maximumConnections, default: "`4096`",
            meaning:
                "open connections at once; beyond, new ones are closed and a warning logged (keep under `ulimit -n`)"
        ),
        .integer(
            "LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS", \.http, \.maximumConnectionsPerAddress, default: "`64`",
            meaning:
                "open connections at once from one TCP peer address (IPv6: one /64); beyond, new ones are closed at once (`0`: no cap). Connections from `LATCHKEY_TRUSTED_PROXIES` count only against `LATCHKEY_MAX_CONNECTIONS`"
        ),
        .list(
            "LATCHKEY_TRUSTED_PROXIES", \.http, \.trustedProxies, default: "(none)",
            meaning:
                "CIDR networks of reverse proxies whose forwarding header names the client; IPv6 clients count by /64"
        ),
        .field(
            "LATCHKEY_FORWARDED_HEADER", \.http, \.forwardedHeader, default: "`x-forwarded-for`",
            meaning:
                "the one header those proxies write the client into: `x-forwarded-for` or `forwarded` (the other is ignored: a proxy passes it through as the client sent it)"
        ) { $0.value($1)?.lowercased() },
        .text(
            "LATCHKEY_NODE_NAME", \.http, \.nodeName, default: "the machine's host name",
            meaning: "this server's name in the audit log, so an event says which node served it"
        ),
    ]

    /// Where data is stored.
    static let databaseSettings: [Setting] = [
        .text(
            "LATCHKEY_DATABASE_URL", \.database, \.url, default: "`latchkey-data/latchkey.sqlite`",
            meaning:
                "SQLite path, `sqlite:PATH`, `file:PATH` or `sqlite::memory:`; or PostgreSQL, `postgres://user:password@host:5432/db?sslmode=verify-full` (`disable`, `require`, `verify-full`; default `verify-full`, `disable` on a literal loopback address such as `127.0.0.1`, not the name `localhost`; also `sslrootcert`, `connect_timeout`, `options`, `application_name`). See docs/deployment.md"
        ),
        .integer(
            "LATCHKEY_DATABASE_POOL_SIZE", \.database, \.poolSize, default: "`10`",
            meaning:
                "PostgreSQL: the most connections one server holds (every server holds its own: keep their sum under `max_connections`)"
        ),
        .seconds(
            "LATCHKEY_DATABASE_TIMEOUT", \.database, \.timeout, default: "`5`",
            meaning:
                "PostgreSQL: seconds an operation waits for a connection and its answer before the request gets 503 `unavailable` with `Retry-After`"
        ),
    ]

    /// Facebook's endpoints, the app credentials, and how Latchkey calls Facebook.
    static let facebookSettings: [Setting] = [
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
        .text(
            "LATCHKEY_FACEBOOK_GRAPH_URL", \.facebook, \.graphURL, default: "`https://graph.facebook.com/v21.0`",
            meaning: "Graph base"
        ),
        .text(
            "LATCHKEY_FACEBOOK_JWKS_URL", \.facebook, \.jwksURL,
            default: "`https://www.facebook.com/.well-known/oauth/openid/jwks/`",
            meaning: "Limited Login keys"
        ),
        .list(
            "LATCHKEY_FACEBOOK_ISSUERS", \.facebook, \.issuers, default: "`https://www.facebook.com`",
            meaning: "accepted `iss` (add `https://facebook.com` for the legacy issuer)"
        ),
        .text(
            "LATCHKEY_FACEBOOK_DIALOG_URL", \.facebook, \.dialogURL,
            default: "`https://www.facebook.com/v21.0/dialog/oauth`",
            meaning: "login dialog (Easy Login)"
        ),
        .seconds(
            "LATCHKEY_FACEBOOK_TIMEOUT", \.facebook, \.timeout, default: "`5`",
            meaning: "seconds per Facebook call"
        ),
        .integer(
            "LATCHKEY_FACEBOOK_MAX_CONNECTIONS", \.facebook, \.maximumConnections, default: "`256`",
            meaning: "keep-alive connections to Facebook at once (two per classic login in flight)"
        ),
        .integer(
            "LATCHKEY_FACEBOOK_MAX_IN_FLIGHT", \.facebook, \.maximumInFlight, default: "`256`",
            meaning: "Graph calls in flight at once; beyond, a sign-in gets a fast 503"
        ),
        .seconds(
            "LATCHKEY_FACEBOOK_REJECTION_TTL", \.facebook, \.rejectionLifetime, default: "`60`",
            meaning: "seconds a token Facebook refused is refused again without a Graph call (`0`: off)"
        ),
        .integer(
            "LATCHKEY_FACEBOOK_USAGE_WARN_PERCENT", \.facebook, \.usageWarningPercent, default: "`80`",
            meaning:
                "Graph usage Facebook reports (`X-App-Usage`, percent of the app's hourly limit) past which a warning is logged; `/ready` shows the last report"
        ),
        .integer(
            "LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT", \.facebook, \.usageTightenPercent, default: "`95`",
            meaning:
                "usage past which Latchkey tightens its own limits to keep the app out of Facebook's throttle: refused tokens are remembered at least 10 minutes (even with the TTL at `0`), app tokens are refused without a call, and classic sign-ins per address and per /48 and Easy Login starts per address drop to a quarter of their limits ([docs/security.md](docs/security.md))"
        ),
        .field(
            "LATCHKEY_FACEBOOK_STARTUP_CHECK", \.facebook, \.startupCheck,
            default: "`before-start` (`background` in `--dev`)",
            meaning:
                "when to ask Facebook whether it accepts the app credentials: `before-start`, `background` or `off`"
        ) { try $0.choice($1, FacebookStartupCheck.self, "before-start, background or off") },
        .seconds(
            "LATCHKEY_JWKS_REFETCH_INTERVAL", \.facebook, \.jwksRefetchInterval, default: "`60`",
            meaning: "least seconds between JWKS fetches for unknown kids"
        ),
        .field(
            "LATCHKEY_FACEBOOK_JOIN_BY_BUSINESS", \.facebook, \.joinByBusiness,
            default: "`true` when several app ids are configured",
            meaning:
                "a person's first sign-in through another app of the same business (Facebook's `token_for_business`) lands on the user they already have, the new identity linked to it"
        ) { try $0.flag($1) },
        .seconds(
            "LATCHKEY_SIGNED_REQUEST_MAX_AGE", \.facebook, \.signedRequestMaxAge, default: "`86400` (1 day)",
            meaning:
                "seconds after its `issued_at` a deauthorize or data-deletion callback's `signed_request` is accepted (60 s to 30 days); one from the future beyond `LATCHKEY_CLOCK_SKEW` is refused"
        ),
        .field(
            "LATCHKEY_DEAUTHORIZE_ENDS", \.facebook, \.deauthorizeEnds, default: "`identity-sessions`",
            meaning:
                "what a person removing the app at Facebook (or revoking Sign in with Apple) ends: `identity-sessions` (the sessions that identity opened) or `all-sessions` (every session of the user)"
        ) { try $0.choice($1, DeauthorizeScope.self, "identity-sessions or all-sessions") },
        .field(
            "LATCHKEY_DATA_DELETION_POLICY", \.facebook, \.dataDeletionPolicy, default: "`delete`",
            meaning:
                "what a Facebook data-deletion request does: `delete` (the user when Facebook was their only way in, else the identity and the properties Facebook wrote), `unlink` (the identity and those properties only) or `queue` (an operator approves or refuses it: `latchkey deletions`)"
        ) { try $0.choice($1, DeletionPolicy.self, "delete, unlink or queue") },
    ]

    /// Verifying a sign-in: id tokens and nonces.
    static let signInSettings: [Setting] = [
        .seconds(
            "LATCHKEY_ID_TOKEN_MAX_AGE", \.signIn, \.idTokenMaxAge, default: "`600`",
            meaning: "seconds after its `iat` a Limited Login id token is still accepted"
        ),
        .seconds(
            "LATCHKEY_CLOCK_SKEW", \.signIn, \.clockSkew, default: "`60`",
            meaning:
                "seconds of clock difference tolerated: Facebook's id tokens (`iat`, `exp`), and Easy Login requests sealed by another server (at most 600)"
        ),
        .flag(
            "LATCHKEY_ALLOW_MISSING_NONCE", \.signIn, \.allowMissingNonce, default: "`false`",
            meaning: "accept id tokens without a nonce"
        ),
        .flag(
            "LATCHKEY_REQUIRE_SERVER_NONCE", \.signIn, \.requireServerNonce, default: "`false`",
            meaning: "require `/v1/auth/nonce` nonces"
        ),
        .seconds(
            "LATCHKEY_NONCE_TTL", \.signIn, \.nonceLifetime, default: "`600`",
            meaning: "seconds a `/v1/auth/nonce` nonce stays usable"
        ),
        .field(
            "LATCHKEY_LIMITED_LOGIN_NONCE", \.signIn, \.limitedLoginNonce, default: "`hashed`",
            meaning:
                "how a Limited Login token's `nonce` claim matches the nonce sent: `hashed` (the claim is its SHA-256 hex, as the SDK and Firebase do; an intercepted token alone signs nobody in), `raw` (the claim is the nonce itself; needs `LATCHKEY_REQUIRE_SERVER_NONCE=true`), `either` (while apps move over). docs/security.md says what each protects against"
        ) { try $0.choice($1, IDTokenPolicy.NonceMatching.self, "hashed, raw or either", lowercased: true) },
    ]

    /// The user properties a sign-in maps and apps may write (after the default mapping: its properties are the default of the mappable ones).
    /// Guests, linking identities, merging and deleting accounts.
    static let appleSettings: [Setting] = [
        .list(
            "LATCHKEY_APPLE_CLIENT_IDS", \.apple, \.clientIDs, default: "(none: Sign in with Apple off)",
            meaning:
                "the app's bundle ids and Services ids, comma-separated: id tokens issued to them are accepted (`aud`), and each one's code is exchanged and its refresh token revoked under it"
        ),
        .optionalText(
            "LATCHKEY_APPLE_TEAM_ID", \.apple, \.teamID, default: "(required with Apple)",
            meaning: "the 10-character Team ID of the Apple developer account"
        ),
        .optionalText(
            "LATCHKEY_APPLE_KEY_ID", \.apple, \.keyID, default: "(required with Apple)",
            meaning: "the 10-character Key ID of the Sign in with Apple key"
        ),
        .field(
            "LATCHKEY_APPLE_PRIVATE_KEY", \.apple, \.privateKey, default: "(required with Apple)",
            meaning:
                "that key's `.p8` file, usually given as `LATCHKEY_APPLE_PRIVATE_KEY_FILE`: it signs a client secret, minutes long, for each call to Apple (a start checks that it is a P-256 private key)"
        ) { reader, name in
            try reader.value(name).map {
                try ApplePrivateKey(pem: $0, setting: reader.fromFiles.contains(name) ? name + "_FILE" : name)
            }
        },
        .text(
            "LATCHKEY_APPLE_URL", \.apple, \.url, default: "`https://appleid.apple.com` (the emulator in `--dev`)",
            meaning: "Apple's base URL: `/auth/keys`, `/auth/token`, `/auth/revoke`"
        ),
        .seconds(
            "LATCHKEY_APPLE_TIMEOUT", \.apple, \.timeout, default: "`10`",
            meaning: "upper bound on each call to Apple; beyond it a sign-in gets 503 `apple_unavailable`"
        ),
        Setting(
            "LATCHKEY_APPLE_FIELDS_MAPPING", group: .apple,
            default: "`given_name=givenName,family_name=familyName,email=email`",
            meaning:
                "Apple's fields (`given_name`, `family_name`, `name`, `email`, `email_verified`, `is_private_email`, `sub`, `real_user_status`) onto user properties; the name comes only from the app, on the first authorization"
        ) { name, reader, configuration in
            if let mapping = try Self.readMapping(name, reader) { configuration.apple.fieldsMapping = mapping }
        },
    ]

    static let identitiesSettings: [Setting] = [
        .flag(
            "LATCHKEY_ANONYMOUS_USERS", \.identities, \.anonymousUsers, default: "`off` (`on` in `--dev`)",
            meaning:
                "`on` lets apps create guests with `POST /v1/auth/anonymous` (rate-limited per address like sign-ins)"
        ),
        .seconds(
            "LATCHKEY_ANONYMOUS_USER_TTL", \.identities, \.anonymousUserLifetime, default: "`2592000` (30 days)",
            meaning:
                "seconds after which a guest nobody used (no sign-in or refresh) is deleted by the maintenance service"
        ),
        .seconds(
            "LATCHKEY_LINK_TICKET_TTL", \.identities, \.linkTicketLifetime, default: "`600`",
            meaning: "seconds a `409 identity_already_linked` ticket can complete a merge"
        ),
        .seconds(
            "LATCHKEY_REAUTHENTICATION_WINDOW", \.identities, \.reauthenticationWindow, default: "`600`",
            meaning:
                "seconds after a sign-in (or a fresh proof of an already linked credential) during which a session may delete its account, add or unlink an identity, or complete a merge (guests are exempt)"
        ),
    ]

    /// A second factor: TOTP authenticators, recovery codes and challenges.
    static let secondFactorSettings: [Setting] = [
        .text(
            "LATCHKEY_TOTP_ISSUER", \.secondFactor, \.totpIssuer, default: "`Latchkey`",
            meaning:
                "the issuer an authenticator app shows beside the account (`otpauth://` URI's label prefix and `issuer`): your app's name"
        ),
        .integer(
            "LATCHKEY_TOTP_SKEW_STEPS", \.secondFactor, \.skewSteps, default: "`1`",
            meaning:
                "30-second steps a TOTP code may be early or late (0–2): 1 accepts the previous and the next code, for a phone's clock a little off"
        ),
        .integer(
            "LATCHKEY_TOTP_MAX_ATTEMPTS", \.secondFactor, \.maximumAttempts, default: "`5`",
            meaning:
                "wrong codes a challenge takes before it dies; as many wrong codes for one user in a row make their further attempts wait (`429`, growing from 30 s to an hour) until a right one"
        ),
        .seconds(
            "LATCHKEY_MFA_CHALLENGE_TTL", \.secondFactor, \.challengeLifetime, default: "`300`",
            meaning: "seconds a `second_factor_required` challenge stays usable (once)"
        ),
    ]

    static let usersSettings: [Setting] = [
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
                configuration.users.clientMappableProperties = names == ["*"] ? nil : Set(names)
            } else {
                configuration.users.clientMappableProperties = Set(configuration.users.defaultFieldsMapping.values)
            }
        },
        .field(
            "LATCHKEY_USER_WRITABLE_PROPERTIES", \.users, \.writableProperties, default: "(none)",
            meaning: "properties `PATCH /v1/users/me` may change"
        ) { $0.list($1).map(Set.init) },
        .flag(
            "LATCHKEY_REFRESH_PROPERTIES_ON_LOGIN", \.users, \.refreshPropertiesOnLogin, default: "`true`",
            meaning: "re-apply the mapping on every login"
        ),
    ]

    /// Easy Login.
    static let easyLoginSettings: [Setting] = [
        Setting(
            "LATCHKEY_OAUTH_CLIENTS", group: .easyLogin, default: "(none: Easy Login off)",
            meaning:
                "Easy Login clients, `client_id=redirect_uri` entries, comma-separated, one per redirect URI (`ios=myapp://auth,ios=http://127.0.0.1/callback`). `http` only for loopback IPs, which match on any port; no fragments or user info"
        ) { name, reader, configuration in
            try Self.readOAuthClients(reader, &configuration)
        },
        .seconds(
            "LATCHKEY_EASY_LOGIN_TTL", \.easyLogin, \.requestLifetime, default: "`600`",
            meaning: "seconds a person may spend on Facebook's dialog"
        ),
        .seconds(
            "LATCHKEY_AUTHORIZATION_CODE_TTL", \.easyLogin, \.authorizationCodeLifetime, default: "`60`",
            meaning: "seconds an Easy Login code stays redeemable (at most 600)"
        ),
        .field(
            "LATCHKEY_EASY_LOGIN_MAX_PENDING", \.easyLogin, \.maximumPending, default: "unset",
            meaning:
                "deprecated, no longer used: Easy Login stores no request before Facebook's answer, so there is nothing to cap. Still accepted, so existing configurations start; a server given it logs `latchkey.settings.deprecated`"
        ) { try $0.integer($1).map(Optional.some) },
    ]

    /// Sessions, their tokens and their signing keys.
    static let sessionsSettings: [Setting] = [
        .seconds(
            "LATCHKEY_ACCESS_TOKEN_TTL", \.sessions, \.accessTokenLifetime, default: "`900`",
            meaning: "seconds an access token is valid"
        ),
        .seconds(
            "LATCHKEY_REFRESH_TOKEN_TTL", \.sessions, \.refreshTokenLifetime, default: "`2592000`",
            meaning: "seconds a refresh token (and so an unused session) lives; each refresh starts it again"
        ),
        .seconds(
            "LATCHKEY_REFRESH_RETRY_WINDOW", \.sessions, \.refreshRetryWindow, default: "`10`",
            meaning:
                "a spent refresh token whose successor was never used (the app lost or failed to save the answer) gets that successor again, however late; one whose successor was used is refused without ending the session for this many seconds after its own refresh (a concurrent refresh won), and revokes the session after; `0` turns retries off: any spent token revokes (0 to 300)"
        ),
        .seconds(
            "LATCHKEY_KEY_REFRESH_INTERVAL", \.sessions, \.keyRefreshInterval, default: "`60`",
            meaning:
                "seconds between two reads of the session signing keys, so a key added by `latchkey keys rotate` reaches every running server (0.1 to 3600)"
        ),
        .seconds(
            "LATCHKEY_KEY_ACTIVATION_DELAY", \.sessions, \.keyActivationDelay, default: "`600`",
            meaning:
                "seconds a new signing key is only published before servers sign with it: at least twice the refresh interval, and longer than app backends cache the JWKS (5 minutes)"
        ),
    ]

    /// Secrets at rest.
    static let secretsSettings: [Setting] = [
        .field(
            "LATCHKEY_KEY_ENCRYPTION_KEY", \.secrets, \.keyEncryptionKey, default: "(required outside `--dev`)",
            meaning:
                "32 random bytes, base64 or hex (`latchkey keys generate-kek`): seals session signing keys at rest"
        ) { reader, name in try reader.value(name).map { try KeyEncryptionKey(encoded: $0) } },
        .field(
            "LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS", \.secrets, \.previousKeyEncryptionKeys, default: "(none)",
            meaning:
                "earlier key-encryption keys; keys sealed under them are sealed again under the current one on start"
        ) { reader, name in try reader.list(name)?.map { try KeyEncryptionKey(encoded: $0, setting: name) } },
        .flag(
            "LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS", \.secrets, \.allowPlaintextSigningKeys,
            default: "`false` (`true` in `--dev`)",
            meaning: "run without a key-encryption key, storing signing keys unencrypted"
        ),
    ]

    /// Background work.
    static let maintenanceSettings: [Setting] = [
        .seconds(
            "LATCHKEY_AUDIT_RETENTION", \.maintenance, \.auditRetention, default: "`15552000` (180 days)",
            meaning: "seconds audit events are kept before the pruner deletes them"
        ),
        .seconds(
            "LATCHKEY_PRUNE_INTERVAL", \.maintenance, \.pruneInterval, default: "`300`",
            meaning:
                "seconds between two background prunes of expired nonces, `jti`s, Easy Login requests and codes, ended sessions and old audit events (1 to 86400)"
        ),
        .seconds(
            "LATCHKEY_JOB_INTERVAL", \.maintenance, \.jobInterval, default: "`10`",
            meaning:
                "seconds between two looks for due background jobs (revoking a deleted account's Facebook permissions and Apple tokens), kept in the database and retried (0.1 to 3600)"
        ),
    ]

    /// The admin API's listener, logs and metrics.
    static let operationsSettings: [Setting] = [
        .optionalText(
            "LATCHKEY_ADMIN_LISTEN", \.operations, \.adminListen, default: "unset: on the public listener",
            meaning:
                "`HOST:PORT` (`127.0.0.1:9090`, `[::1]:9090`) where the admin API (`/admin/v1`) and `/metrics` are served instead of the public listener, which then answers 404 under `/admin` and for `/metrics`: keep it off the internet"
        ),
        .field(
            "LATCHKEY_LOG_FORMAT", \.operations, \.logFormat, default: "`text`",
            meaning:
                "`text`, or `json`: one JSON object per line (`time`, `level`, `logger`, `message`, and each metadata key as written, `latchkey.request.id` among them), for log collectors"
        ) { try $0.choice($1, OperationsSettings.LogFormat.self, "text or json") },
        .flag(
            "LATCHKEY_ACCESS_LOG", \.operations, \.accessLog, default: "`false`",
            meaning:
                "log each request (`latchkey.http.request`: method, route template, status, duration, the client address the abuse limits count, request id; never a query or a token)"
        ),
    ]

    /// The abuse limits, from their own table (`AbuseLimitRules.settings`), so a new limit
    /// cannot be left out: one was, and its setting was silently ignored.
    static let limitSettings: [Setting] = AbuseLimitRules.settings.map { limit in
        let rule = AbuseLimitRules()[keyPath: limit.keyPath]
        return .field(
            limit.setting, \.limits, limit.keyPath, default: "`\(rule.map(\.description) ?? "off")`",
            meaning: limitMeanings[limit.setting] ?? ""
        ) { reader, name in
            // `off` is a value too (`nil`), hence the double optional.
            try reader.value(name).map { try RateRule.parse($0, name: limit.rule, setting: name) }
        }
    }

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
            "Easy Login's Facebook callback and the data-deletion status page per client address, counted before its state is opened (each may write the state's single use); beyond, a 429 page",
        "LATCHKEY_LIMIT_PROVIDER_CALLBACK_PER_ADDRESS":
            "Facebook's deauthorize and data-deletion callbacks and Apple's notifications per client address (the providers' servers, apart from browsers); each refusal is an audit row",
        "LATCHKEY_LIMIT_ADMIN_PER_ADDRESS":
            "admin API calls with a wrong or no admin key per client address (a good key gives its count back)",
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
        configuration.facebook.apps = ids.enumerated().map { index, id in
            FacebookApp(id: id, secret: secrets.count == 1 ? secrets[0] : secrets[index])
        }
    }

    /// `LATCHKEY_DEFAULT_FIELDS_MAPPING`: `field=property` entries.
    static func readDefaultMapping(_ reader: SettingReader, _ configuration: inout ServerConfiguration) throws {
        if let mapping = try readMapping("LATCHKEY_DEFAULT_FIELDS_MAPPING", reader) {
            configuration.users.defaultFieldsMapping = mapping
        }
    }

    /// `field=property` entries of the mapping setting `name`; `nil` when not given.
    static func readMapping(_ name: String, _ reader: SettingReader) throws -> [String: String]? {
        guard let pairs = reader.list(name) else { return nil }
        var mapping: [String: String] = [:]
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else {
                throw ConfigurationError(
                    "\(name) entries look like field=property, not \(reader.shown(name, pair))")
            }
            mapping[parts[0]] = parts[1]
        }
        return mapping
    }

    /// `LATCHKEY_OAUTH_CLIENTS`: `client_id=redirect_uri` entries.
    static func readOAuthClients(_ reader: SettingReader, _ configuration: inout ServerConfiguration) throws {
        let name = "LATCHKEY_OAUTH_CLIENTS"
        guard let entries = reader.list(name) else { return }
        do {
            configuration.easyLogin.clients = try OAuthClient.parse(entries)
        } catch let error as ConfigurationError where reader.fromFiles.contains(name) {
            _ = error  // its text quotes the file
            throw ConfigurationError("\(name)_FILE does not hold valid entries (client_id=redirect_uri, one a line)")
        }
    }
}

extension AbuseLimitRules: SettingsGroup {
    /// Listed under its own heading.
    package static let group = Setting.Group.limits
}
