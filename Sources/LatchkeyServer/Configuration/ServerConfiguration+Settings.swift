import Foundation
import HTTPTypes
import LatchkeyCrypto
import NIOCore

extension ServerConfiguration {
    /// Every setting's name, for the README and for rejecting typos in configuration files. The
    /// abuse limits come from their own table, so a new limit cannot be left out of this list
    /// (one was: its setting was silently ignored); a test holds the rest to the names read below.
    public static let settingNames: [String] =
        [
            "LATCHKEY_HOST", "LATCHKEY_PORT", "LATCHKEY_PUBLIC_URL", "LATCHKEY_DATABASE_URL",
            "LATCHKEY_FACEBOOK_APP_ID",
            "LATCHKEY_FACEBOOK_APP_SECRET", "LATCHKEY_FACEBOOK_GRAPH_URL", "LATCHKEY_FACEBOOK_JWKS_URL",
            "LATCHKEY_FACEBOOK_ISSUERS", "LATCHKEY_FACEBOOK_DIALOG_URL", "LATCHKEY_ACCESS_TOKEN_TTL",
            "LATCHKEY_REFRESH_TOKEN_TTL", "LATCHKEY_ID_TOKEN_MAX_AGE", "LATCHKEY_CLOCK_SKEW",
            "LATCHKEY_ALLOW_MISSING_NONCE",
            "LATCHKEY_REQUIRE_SERVER_NONCE", "LATCHKEY_LIMITED_LOGIN_NONCE", "LATCHKEY_NONCE_TTL",
            "LATCHKEY_DEFAULT_FIELDS_MAPPING",
            "LATCHKEY_CLIENT_MAPPABLE_PROPERTIES", "LATCHKEY_USER_WRITABLE_PROPERTIES",
            "LATCHKEY_REFRESH_PROPERTIES_ON_LOGIN",
            "LATCHKEY_FACEBOOK_TIMEOUT", "LATCHKEY_JWKS_REFETCH_INTERVAL", "LATCHKEY_MAX_BODY_BYTES",
            "LATCHKEY_OAUTH_CLIENTS", "LATCHKEY_EASY_LOGIN_TTL", "LATCHKEY_AUTHORIZATION_CODE_TTL",
            "LATCHKEY_EASY_LOGIN_MAX_PENDING", "LATCHKEY_FACEBOOK_MAX_CONNECTIONS", "LATCHKEY_FACEBOOK_STARTUP_CHECK",
            "LATCHKEY_KEY_ENCRYPTION_KEY", "LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS",
            "LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS",
            "LATCHKEY_AUDIT_RETENTION", "LATCHKEY_PRUNE_INTERVAL", "LATCHKEY_TRUSTED_PROXIES",
            "LATCHKEY_KEY_REFRESH_INTERVAL", "LATCHKEY_KEY_ACTIVATION_DELAY", "LATCHKEY_REFRESH_RETRY_WINDOW",
            "LATCHKEY_FORWARDED_HEADER",
            "LATCHKEY_FACEBOOK_MAX_IN_FLIGHT", "LATCHKEY_FACEBOOK_REJECTION_TTL",
            "LATCHKEY_FACEBOOK_USAGE_WARN_PERCENT", "LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT",
            "LATCHKEY_REQUEST_TIMEOUT", "LATCHKEY_DATABASE_POOL_SIZE", "LATCHKEY_DATABASE_TIMEOUT",
            "LATCHKEY_IDLE_TIMEOUT", "LATCHKEY_MAX_CONNECTIONS", "LATCHKEY_FIRST_REQUEST_TIMEOUT",
            "LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS",
        ] + AbuseLimitRules.settings.map(\.setting)

    /// Every setting may instead be read from a file, `NAME_FILE` (as container secrets are
    /// mounted): app secrets, the key-encryption key and database passwords then never sit in the
    /// environment, a command line or a configuration file.
    public static let fileSettingNames: [String] = settingNames.map { $0 + "_FILE" }

    /// `settings` with each `NAME_FILE` replaced by `NAME` and the file's contents (surrounding
    /// white space and newlines trimmed).
    /// - Throws: `ConfigurationError` when a file cannot be read, or a setting is given both ways.
    static func resolvingFiles(_ settings: [String: String]) throws -> [String: String] {
        var resolved = settings
        for name in settingNames {
            guard let path = settings[name + "_FILE"]?.trimmingCharacters(in: .whitespaces), !path.isEmpty else {
                continue
            }
            guard (settings[name] ?? "").trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ConfigurationError("set \(name) or \(name)_FILE, not both")
            }
            let contents = try readSettingFile(path, name: name)
            resolved[name] = contents.trimmingCharacters(in: .whitespacesAndNewlines)
            resolved[name + "_FILE"] = nil
        }
        return resolved
    }

    /// The contents of a `NAME_FILE`: a regular file, or a pipe such as `/dev/stdin` (an operator
    /// hands a command the key-encryption key that way, from a file only root reads, without it
    /// touching a command line or the environment). At most 1 MiB.
    /// - Throws: `ConfigurationError` naming the setting and the path, never the contents.
    static func readSettingFile(_ path: String, name: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "no permission to read it" : "no such file"
            throw ConfigurationError("cannot read \(name)_FILE '\(path)': \(reason)")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: 1 << 20) ?? Data()
        } catch {
            throw ConfigurationError("cannot read \(name)_FILE '\(path)': \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("\(name)_FILE '\(path)' is not UTF-8 text")
        }
        return text
    }

    /// Builds a configuration from `LATCHKEY_…` settings; absent settings keep their defaults.
    /// - Throws: `ConfigurationError` naming a setting whose value cannot be parsed.
    public init(settings given: [String: String]) throws {
        self.init()
        let settings = try Self.resolvingFiles(given)
        settingsFromFiles = Set(Self.settingNames.filter { given[$0 + "_FILE"] != nil })
        let configuration = self
        /// A value for an error message: quoted, unless it came from a file (maybe a secret's).
        func shown(_ name: String, _ raw: String) -> String { configuration.shown(name, raw) }
        func value(_ name: String) -> String? {
            guard let raw = settings[name]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }
        func list(_ name: String) -> [String]? {
            // Commas or newlines: a `_FILE` holds one value a line.
            value(name).map {
                $0.split(whereSeparator: { $0 == "," || $0.isNewline }).map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty }
            }
        }
        func seconds(_ name: String) throws -> TimeInterval? {
            guard let raw = value(name) else { return nil }
            guard let number = TimeInterval(raw), number.isFinite else {
                throw ConfigurationError("\(name) must be a number of seconds, not \(shown(name, raw))")
            }
            return number
        }
        func integer(_ name: String) throws -> Int? {
            guard let raw = value(name) else { return nil }
            guard let number = Int(raw) else {
                throw ConfigurationError("\(name) must be a number, not \(shown(name, raw))")
            }
            return number
        }
        func flag(_ name: String) throws -> Bool? {
            guard let raw = value(name)?.lowercased() else { return nil }
            switch raw {
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            default: throw ConfigurationError("\(name) must be true or false, not \(shown(name, raw))")
            }
        }
        if let host = value("LATCHKEY_HOST") { self.host = host }
        if let number = try integer("LATCHKEY_PORT") { port = number }
        publicURL = value("LATCHKEY_PUBLIC_URL")
        if let url = value("LATCHKEY_DATABASE_URL") { databaseURL = url }
        if let number = try integer("LATCHKEY_DATABASE_POOL_SIZE") { databasePoolSize = number }
        if let number = try seconds("LATCHKEY_DATABASE_TIMEOUT") { databaseTimeout = number }
        let ids = list("LATCHKEY_FACEBOOK_APP_ID") ?? []
        let secrets = list("LATCHKEY_FACEBOOK_APP_SECRET") ?? []
        if !ids.isEmpty {
            guard secrets.count == ids.count || secrets.count == 1 else {
                throw ConfigurationError(
                    "LATCHKEY_FACEBOOK_APP_SECRET needs one secret per app id in LATCHKEY_FACEBOOK_APP_ID (comma-separated, same order)"
                )
            }
            facebookApps = ids.enumerated().map { index, id in
                FacebookApp(id: id, secret: secrets.count == 1 ? secrets[0] : secrets[index])
            }
        }
        if let url = value("LATCHKEY_FACEBOOK_GRAPH_URL") { graphURL = url }
        if let url = value("LATCHKEY_FACEBOOK_JWKS_URL") { jwksURL = url }
        if let issuers = list("LATCHKEY_FACEBOOK_ISSUERS") { self.issuers = issuers }
        if let url = value("LATCHKEY_FACEBOOK_DIALOG_URL") { dialogURL = url }
        if let number = try seconds("LATCHKEY_ACCESS_TOKEN_TTL") { accessTokenLifetime = number }
        if let number = try seconds("LATCHKEY_REFRESH_TOKEN_TTL") { refreshTokenLifetime = number }
        if let number = try seconds("LATCHKEY_ID_TOKEN_MAX_AGE") { idTokenMaxAge = number }
        if let number = try seconds("LATCHKEY_CLOCK_SKEW") { clockSkew = number }
        if let number = try seconds("LATCHKEY_NONCE_TTL") { nonceLifetime = number }
        if let number = try seconds("LATCHKEY_FACEBOOK_TIMEOUT") { facebookTimeout = number }
        if let number = try seconds("LATCHKEY_JWKS_REFETCH_INTERVAL") { jwksRefetchInterval = number }
        if let number = try seconds("LATCHKEY_EASY_LOGIN_TTL") { easyLoginRequestLifetime = number }
        if let number = try seconds("LATCHKEY_AUTHORIZATION_CODE_TTL") { authorizationCodeLifetime = number }
        if let number = try seconds("LATCHKEY_AUDIT_RETENTION") { auditRetention = number }
        if let number = try seconds("LATCHKEY_PRUNE_INTERVAL") { pruneInterval = number }
        if let number = try seconds("LATCHKEY_KEY_REFRESH_INTERVAL") { keyRefreshInterval = number }
        if let number = try seconds("LATCHKEY_KEY_ACTIVATION_DELAY") { keyActivationDelay = number }
        if let number = try seconds("LATCHKEY_REFRESH_RETRY_WINDOW") { refreshRetryWindow = number }
        if let number = try integer("LATCHKEY_EASY_LOGIN_MAX_PENDING") { easyLoginMaximumPending = number }
        if let number = try integer("LATCHKEY_FACEBOOK_MAX_CONNECTIONS") { facebookMaxConnections = number }
        if let entries = list("LATCHKEY_OAUTH_CLIENTS") {
            do {
                oauthClients = try OAuthClient.parse(entries)
            } catch let error as ConfigurationError where settingsFromFiles.contains("LATCHKEY_OAUTH_CLIENTS") {
                _ = error  // its text quotes the file
                throw ConfigurationError(
                    "LATCHKEY_OAUTH_CLIENTS_FILE does not hold valid entries (client_id=redirect_uri, one a line)")
            }
        }
        if let allow = try flag("LATCHKEY_ALLOW_MISSING_NONCE") { allowMissingNonce = allow }
        if let require = try flag("LATCHKEY_REQUIRE_SERVER_NONCE") { requireServerNonce = require }
        if let refresh = try flag("LATCHKEY_REFRESH_PROPERTIES_ON_LOGIN") { refreshPropertiesOnLogin = refresh }
        if let raw = value("LATCHKEY_LIMITED_LOGIN_NONCE") {
            guard let mode = IDTokenPolicy.NonceMatching(rawValue: raw.lowercased()) else {
                throw ConfigurationError(
                    "LATCHKEY_LIMITED_LOGIN_NONCE must be hashed, raw or either, not \(shown("LATCHKEY_LIMITED_LOGIN_NONCE", raw))"
                )
            }
            limitedLoginNonce = mode
        }
        if let pairs = list("LATCHKEY_DEFAULT_FIELDS_MAPPING") {
            var mapping: [String: String] = [:]
            for pair in pairs {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else {
                    throw ConfigurationError(
                        "LATCHKEY_DEFAULT_FIELDS_MAPPING entries look like field=property, not \(shown("LATCHKEY_DEFAULT_FIELDS_MAPPING", pair))"
                    )
                }
                mapping[parts[0]] = parts[1]
            }
            defaultFieldsMapping = mapping
        }
        if let names = list("LATCHKEY_CLIENT_MAPPABLE_PROPERTIES") {
            clientMappableProperties = names == ["*"] ? nil : Set(names)
        } else {
            clientMappableProperties = Set(defaultFieldsMapping.values)
        }
        if let names = list("LATCHKEY_USER_WRITABLE_PROPERTIES") { userWritableProperties = Set(names) }
        if let raw = value("LATCHKEY_FACEBOOK_STARTUP_CHECK") {
            guard let check = FacebookStartupCheck(rawValue: raw) else {
                throw ConfigurationError(
                    "LATCHKEY_FACEBOOK_STARTUP_CHECK must be before-start, background or off, not \(shown("LATCHKEY_FACEBOOK_STARTUP_CHECK", raw))"
                )
            }
            facebookStartupCheck = check
        }
        for limit in AbuseLimitRules.settings {
            if let raw = value(limit.setting) {
                abuseLimits[keyPath: limit.keyPath] = try RateRule.parse(raw, name: limit.rule, setting: limit.setting)
            }
        }
        if let networks = list("LATCHKEY_TRUSTED_PROXIES") { trustedProxies = networks }
        if let header = value("LATCHKEY_FORWARDED_HEADER") { forwardedHeader = header.lowercased() }
        if let number = try integer("LATCHKEY_FACEBOOK_MAX_IN_FLIGHT") { facebookMaxInFlight = number }
        if let number = try seconds("LATCHKEY_FACEBOOK_REJECTION_TTL") { facebookRejectionLifetime = number }
        if let number = try integer("LATCHKEY_FACEBOOK_USAGE_WARN_PERCENT") { facebookUsageWarningPercent = number }
        if let number = try integer("LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT") { facebookUsageTightenPercent = number }
        if let number = try seconds("LATCHKEY_REQUEST_TIMEOUT") { requestTimeout = number }
        if let number = try seconds("LATCHKEY_IDLE_TIMEOUT") { idleTimeout = number }
        if let number = try integer("LATCHKEY_MAX_CONNECTIONS") { maximumConnections = number }
        if let number = try seconds("LATCHKEY_FIRST_REQUEST_TIMEOUT") { firstRequestTimeout = number }
        if let number = try integer("LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS") { maximumConnectionsPerAddress = number }
        if let raw = value("LATCHKEY_KEY_ENCRYPTION_KEY") {
            keyEncryptionKey = try KeyEncryptionKey(encoded: raw)
        }
        if let keys = list("LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS") {
            previousKeyEncryptionKeys = try keys.map {
                try KeyEncryptionKey(encoded: $0, setting: "LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS")
            }
        }
        if let allow = try flag("LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS") { allowPlaintextSigningKeys = allow }
        if let number = try integer("LATCHKEY_MAX_BODY_BYTES") { maximumBodySize = number }
    }

    /// `raw` quoted for an error message, or, when `name` came from a `_FILE` (which may be a
    /// secret's file named by mistake), only where it came from.
    func shown(_ name: String, _ raw: String) -> String {
        settingsFromFiles.contains(name) ? "the contents of \(name)_FILE" : "'\(raw)'"
    }

    /// The setting whose name is closest to `name` when `name` looks like its typo (edit distance,
    /// or a missing `LATCHKEY_` prefix), for "did you mean" hints wherever settings are read.
    public static func nearestSettingName(to name: String) -> String? {
        SettingsFile.nearest(to: name, in: Set(settingNames + fileSettingNames))
    }

    /// Reads a configuration file (`SettingsFile`: dotenv forms), refusing unknown names so a
    /// typo cannot silently leave a default in place.
    public static func settings(fromFile path: String) throws -> [String: String] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ConfigurationError("configuration file \(path) does not exist")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("configuration file \(path) cannot be read (check its permissions)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("configuration file \(path) is not UTF-8 text")
        }
        return try SettingsFile.parse(text, path: path, known: Set(settingNames + fileSettingNames))
    }
}
