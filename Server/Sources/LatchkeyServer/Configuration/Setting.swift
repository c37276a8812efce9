import Foundation

/// One setting, declared once: its name, the part of the server it configures, its default and
/// meaning as the README documents them, and how its value is read into the configuration.
/// `ServerConfiguration.settings` lists them all; the configuration is parsed through that table
/// only, and the README's settings table is checked against it (`latchkey settings --markdown`
/// prints it).
package struct Setting: Sendable {
    /// The part of the server a setting configures, in the order the README lists them.
    package enum Group: String, Sendable, CaseIterable {
        /// Listening, connections and requests.
        case http
        /// Where data is stored.
        case database
        /// Facebook's endpoints, the app credentials, and how Latchkey calls Facebook.
        case facebook
        /// Verifying a sign-in: id tokens and nonces.
        case signIn
        /// The user properties a sign-in maps and apps may write.
        case users
        /// Easy Login (OAuth 2.0 with Facebook as the login page).
        case easyLogin
        /// Sign in with Apple.
        case apple
        /// Guests, linking identities, merging and deleting accounts.
        case identities
        /// A second factor: TOTP authenticators and recovery codes.
        case secondFactor
        /// Sessions, their tokens and their signing keys.
        case sessions
        /// Secrets at rest.
        case secrets
        /// Abuse limits.
        case limits
        /// Background work.
        case maintenance
        /// The admin API's listener, logs and metrics.
        case operations

        /// The group's heading in the README and in `latchkey settings`.
        package var title: String {
            switch self {
            case .http: "HTTP"
            case .database: "Database"
            case .facebook: "Facebook"
            case .signIn: "Sign-in"
            case .users: "Users"
            case .easyLogin: "Easy Login"
            case .apple: "Sign in with Apple"
            case .identities: "Identities and accounts"
            case .secondFactor: "Second factor"
            case .sessions: "Sessions"
            case .secrets: "Secrets at rest"
            case .limits: "Abuse limits"
            case .maintenance: "Maintenance"
            case .operations: "Operations"
            }
        }
    }

    /// `LATCHKEY_…`; `NAME_FILE` reads the value from a file instead.
    package let name: String
    /// What it configures.
    package let group: Group
    /// The default, as documented (Markdown).
    package let defaultValue: String
    /// What it means (Markdown, one line).
    package let meaning: String
    /// Reads the setting's value, if given, into the configuration; throws `ConfigurationError`
    /// naming the setting for a value it cannot use.
    let read:
        @Sendable (_ name: String, _ reader: SettingReader, _ configuration: inout ServerConfiguration) throws -> Void

    init(
        _ name: String, group: Group, default defaultValue: String, meaning: String,
        read: @escaping @Sendable (String, SettingReader, inout ServerConfiguration) throws -> Void
    ) {
        self.name = name
        self.group = group
        self.defaultValue = defaultValue
        self.meaning = meaning
        self.read = read
    }

    /// The table as the README shows it: one section per group, one row per setting.
    package static func markdown(_ settings: [Setting]) -> String {
        Group.allCases.compactMap { group in
            let rows = settings.filter { $0.group == group }
            guard !rows.isEmpty else { return nil }
            let lines =
                ["#### \(group.title)", "", "| Setting | Default | Meaning |", "| --- | --- | --- |"]
                + rows.map { "| `\($0.name)` | \($0.defaultValue) | \($0.meaning) |" }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n\n")
    }
}

/// The typed reads every setting shares, over the settings as given (each `NAME_FILE` already
/// replaced by its file's contents). A blank value counts as absent.
struct SettingReader: Sendable {
    let settings: [String: String]
    /// The settings whose value came from a `_FILE`: an error never quotes those (a secret's file
    /// may be named by mistake).
    let fromFiles: Set<String>

    /// `raw` quoted for an error message, or only where it came from when that was a file.
    func shown(_ name: String, _ raw: String) -> String {
        ServerConfiguration.shown(name, raw, fromFiles: fromFiles)
    }

    func value(_ name: String) -> String? {
        guard let raw = settings[name]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
        return raw
    }

    /// Commas or newlines separate the entries: a `_FILE` holds one value a line.
    func list(_ name: String) -> [String]? {
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

    /// One of `Choice`'s raw values; `described` lists them for the error.
    func choice<Choice: RawRepresentable<String>>(
        _ name: String, _ type: Choice.Type, _ described: String, lowercased: Bool = false
    ) throws -> Choice? {
        guard let raw = value(name) else { return nil }
        guard let choice = Choice(rawValue: lowercased ? raw.lowercased() : raw) else {
            throw ConfigurationError("\(name) must be \(described), not \(shown(name, raw))")
        }
        return choice
    }
}

/// One of the configuration's groups of settings (`ServerConfiguration.http`, …): a setting
/// that writes into a group is listed under that group's heading, so the README's sections and
/// the configuration's shape cannot drift apart.
package protocol SettingsGroup: Sendable {
    /// The heading the group's settings are listed under.
    static var group: Setting.Group { get }
}

extension Setting {
    /// A setting read by `read` into `field` of the group at `group`; an absent value keeps the
    /// default.
    static func field<Group: SettingsGroup, Value>(
        _ name: String, _ group: any WritableKeyPath<ServerConfiguration, Group> & Sendable,
        _ field: any WritableKeyPath<Group, Value> & Sendable, default defaultValue: String, meaning: String,
        read: @escaping @Sendable (SettingReader, String) throws -> Value?
    ) -> Setting {
        Setting(name, group: Group.group, default: defaultValue, meaning: meaning) { name, reader, configuration in
            if let value = try read(reader, name) { configuration[keyPath: group][keyPath: field] = value }
        }
    }

    /// Text, as given.
    static func text<Group: SettingsGroup>(
        _ name: String, _ group: any WritableKeyPath<ServerConfiguration, Group> & Sendable,
        _ field: any WritableKeyPath<Group, String> & Sendable, default defaultValue: String, meaning: String
    ) -> Setting {
        .field(name, group, field, default: defaultValue, meaning: meaning) { $0.value($1) }
    }

    /// Text that has no default value (absent stays `nil`).
    static func optionalText<Group: SettingsGroup>(
        _ name: String, _ group: any WritableKeyPath<ServerConfiguration, Group> & Sendable,
        _ field: any WritableKeyPath<Group, String?> & Sendable, default defaultValue: String, meaning: String
    ) -> Setting {
        .field(name, group, field, default: defaultValue, meaning: meaning) { $0.value($1).map(Optional.some) }
    }

    /// A whole number.
    static func integer<Group: SettingsGroup>(
        _ name: String, _ group: any WritableKeyPath<ServerConfiguration, Group> & Sendable,
        _ field: any WritableKeyPath<Group, Int> & Sendable, default defaultValue: String, meaning: String
    ) -> Setting {
        .field(name, group, field, default: defaultValue, meaning: meaning) { try $0.integer($1) }
    }

    /// A number of seconds.
    static func seconds<Group: SettingsGroup>(
        _ name: String, _ group: any WritableKeyPath<ServerConfiguration, Group> & Sendable,
        _ field: any WritableKeyPath<Group, TimeInterval> & Sendable, default defaultValue: String, meaning: String
    ) -> Setting {
        .field(name, group, field, default: defaultValue, meaning: meaning) { try $0.seconds($1) }
    }

    /// `true` or `false` (also `on`/`off`, `yes`/`no`, `1`/`0`).
    static func flag<Group: SettingsGroup>(
        _ name: String, _ group: any WritableKeyPath<ServerConfiguration, Group> & Sendable,
        _ field: any WritableKeyPath<Group, Bool> & Sendable, default defaultValue: String, meaning: String
    ) -> Setting {
        .field(name, group, field, default: defaultValue, meaning: meaning) { try $0.flag($1) }
    }

    /// Entries separated by commas or newlines.
    static func list<Group: SettingsGroup>(
        _ name: String, _ group: any WritableKeyPath<ServerConfiguration, Group> & Sendable,
        _ field: any WritableKeyPath<Group, [String]> & Sendable, default defaultValue: String, meaning: String
    ) -> Setting {
        .field(name, group, field, default: defaultValue, meaning: meaning) { $0.list($1) }
    }
}
