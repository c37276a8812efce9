import Foundation
import LatchkeyAPI

/// The apps and people an emulator starts with, readable from a JSON file.
///
/// ```json
/// {"apps": [{"id": "100000000000001", "secret": "…", "name": "Demo", "redirect_uris": ["myapp://auth"]}],
///  "users": [{"key": "alice", "name": "Alice Liddell", "email": "alice@example.com",
///             "grants": {"100000000000001": ["public_profile", "email"]}}]}
/// ```
public struct EmulatorSeed: Sendable, Codable, Equatable {
    /// A person plus the permissions they already granted to apps (app id → permissions).
    public struct SeededPerson: Sendable, Codable, Equatable {
        /// The profile.
        public var person: Person
        /// Permissions the person has already granted, per app id.
        public var grants: [String: [String]]

        /// Creates a seeded person.
        public init(person: Person, grants: [String: [String]] = [:]) {
            self.person = person
            self.grants = grants
        }

        /// Decodes a person with an optional `grants` member beside the profile fields.
        public init(from decoder: any Decoder) throws {
            person = try Person(from: decoder)
            let container = try decoder.container(keyedBy: GrantKey.self)
            grants = try container.decodeIfPresent([String: [String]].self, forKey: .grants) ?? [:]
        }

        /// Encodes the profile fields and `grants` side by side, as the seed format has them.
        public func encode(to encoder: any Encoder) throws {
            try person.encode(to: encoder)
            var container = encoder.container(keyedBy: GrantKey.self)
            try container.encode(grants, forKey: .grants)
        }

        private enum GrantKey: String, CodingKey { case grants }
    }

    /// Registered apps.
    public var apps: [EmulatorApp]
    /// People who can log in.
    public var users: [SeededPerson]
    /// Optional RSA private keys (PEM) for id tokens, first one active; generated when empty.
    public var signingKeys: [String]

    /// Creates a seed.
    public init(apps: [EmulatorApp], users: [SeededPerson], signingKeys: [String] = []) {
        self.apps = apps
        self.users = users
        self.signingKeys = signingKeys
    }

    enum CodingKeys: String, CodingKey {
        case apps, users
        case signingKeys = "signing_keys"
    }

    /// Decodes a seed; every member is optional.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        apps = try container.decodeIfPresent([EmulatorApp].self, forKey: .apps) ?? []
        users = try container.decodeIfPresent([SeededPerson].self, forKey: .users) ?? []
        signingKeys = try container.decodeIfPresent([String].self, forKey: .signingKeys) ?? []
    }

    /// Reads a seed file.
    /// - Throws: `EmulatorConfigurationError` naming the file and what is wrong with it.
    public static func load(contentsOf url: URL) throws -> EmulatorSeed {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw EmulatorConfigurationError("cannot read seed file \(url.path): \(error.localizedDescription)")
        }
        do {
            return try JSONDecoder().decode(EmulatorSeed.self, from: data)
        } catch {
            throw EmulatorConfigurationError("seed file \(url.path) is not a valid seed: \(error)")
        }
    }

    /// Checks ids, references and formats, so a bad seed fails at start-up rather than mid-login.
    public func validate() throws {
        var appIDs = Set<String>()
        for app in apps {
            guard !app.id.isEmpty, app.id.allSatisfy(\.isNumber) else {
                throw EmulatorConfigurationError("app id '\(app.id)' must be numeric, as Facebook's are")
            }
            guard !app.secret.isEmpty, !app.secret.contains("|") else {
                throw EmulatorConfigurationError("app \(app.id) needs a non-empty secret without '|'")
            }
            guard (1...1_000_000_000).contains(app.dailyActiveUsers) else {
                throw EmulatorConfigurationError("app \(app.id): daily_active_users must be between 1 and 1000000000")
            }
            for (name, url) in [
                ("deauthorize_callback_url", app.deauthorizeCallbackURL),
                ("data_deletion_callback_url", app.dataDeletionCallbackURL),
            ] {
                if let url, !WebURL.isValid(url) {
                    throw EmulatorConfigurationError("app \(app.id): \(name) '\(url)' must be an absolute http(s) URL")
                }
            }
            guard appIDs.insert(app.id).inserted else {
                throw EmulatorConfigurationError("app id \(app.id) appears twice")
            }
        }
        var keys = Set<String>()
        for user in users {
            guard !user.person.key.isEmpty, keys.insert(user.person.key).inserted else {
                throw EmulatorConfigurationError("user key '\(user.person.key)' is empty or appears twice")
            }
            if let birthday = user.person.birthday, !Self.isFacebookBirthday(birthday) {
                throw EmulatorConfigurationError(
                    "user \(user.person.key): birthday '\(birthday)' must be MM/DD/YYYY, MM/DD or YYYY")
            }
            for appID in user.grants.keys where !appIDs.contains(appID) {
                throw EmulatorConfigurationError("user \(user.person.key) grants to unknown app \(appID)")
            }
        }
        for user in users {
            for friend in user.person.friends where !keys.contains(friend) {
                throw EmulatorConfigurationError("user \(user.person.key) has unknown friend '\(friend)'")
            }
        }
    }

    /// Facebook birthdays are `MM/DD/YYYY`, or `MM/DD` / `YYYY` when the user hides part of it.
    static func isFacebookBirthday(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        func number(_ part: Substring, digits: Int, in range: ClosedRange<Int>) -> Bool {
            part.count == digits && Int(part).map(range.contains) == true
        }
        switch parts.count {
        case 1: return number(parts[0], digits: 4, in: 1900...2100)
        case 2: return number(parts[0], digits: 2, in: 1...12) && number(parts[1], digits: 2, in: 1...31)
        case 3:
            return number(parts[0], digits: 2, in: 1...12) && number(parts[1], digits: 2, in: 1...31)
                && number(parts[2], digits: 4, in: 1900...2100)
        default: return false
        }
    }
}

/// A configuration or seed problem, reported before the emulator binds.
public struct EmulatorConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, in words an operator can act on.
    public let description: String
    init(_ description: String) { self.description = description }
}
