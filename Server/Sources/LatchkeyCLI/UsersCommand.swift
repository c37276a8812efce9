import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyServer

/// `latchkey users`: act on one person without SQL, on the database `serve` uses (either backend),
/// while servers run. What it changes takes effect at once on every server: each request checks its
/// session in the database.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Show a user; disable, enable, sign them out everywhere, or remove their second factors.",
        subcommands: [Show.self, Disable.self, Enable.self, RevokeSessions.self, ResetFactors.self])

    /// The user id every subcommand takes, and the database options `keys` and `db` take.
    struct Target: ParsableArguments {
        @Argument(help: "The user's id (the `id` of `GET /v1/users/me`, the access token's `sub`).")
        var id: String

        @OptionGroup var options: KeysCommand.DatabaseOptions

        /// Runs `body` on the store with the user, refusing an id no user has; changes nothing then.
        func withUser<T>(_ body: (any LatchkeyStore, StoredUser) async throws -> T) async throws -> T {
            // Users' rows hold no key material: no key-encryption key is needed to act on them.
            let configuration = try options.configuration(checkingKeyProtection: false)
            return try await options.withStore(configuration) { store in
                guard let user = try await store.user(id: id) else {
                    throw CommandError(
                        "no user has the id \(UsersCommand.quoted(id)) in \(StoreOpening.displayName(configuration)). "
                            + "An id is the `id` field of GET /v1/users/me and the `sub` claim of an access token.")
                }
                return try await body(store, user)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a user: state, dates, properties, identities and recent audit events.")

        @OptionGroup var target: Target

        @Flag(help: "Print JSON instead of text.")
        var json = false

        mutating func run() async throws {
            let json = json
            let text = try await target.withUser { store, user in
                let events = try await store.auditEvents(userID: user.id, limit: UsersCommand.recentEvents)
                return json ? UsersCommand.json(user, events: events) : UsersCommand.describe(user, events: events)
            }
            print(text)
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disable a user: every session ends at once, and sign-ins and refreshes are refused.")

        @OptionGroup var target: Target

        mutating func run() async throws {
            let id = target.id
            // One transaction disables the user, ends every session and records who did it.
            let ended = try await target.withUser { store, _ in
                try await store.setUserDisabled(id: id, disabled: true, now: Date(), by: .commandLine) ?? 0
            }
            print("User \(id) is disabled; \(UsersCommand.sessions(ended)) ended.")
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enable a disabled user: they can sign in again (ended sessions stay ended).")

        @OptionGroup var target: Target

        mutating func run() async throws {
            let id = target.id
            let was = try await target.withUser { store, user in
                try await store.setUserDisabled(id: id, disabled: false, now: Date(), by: .commandLine)
                return user.disabled
            }
            print(was ? "User \(id) is enabled." : "User \(id) was not disabled; nothing changed.")
        }
    }

    struct RevokeSessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke-sessions",
            abstract: "Sign a user out everywhere: every session ends at once; they may sign in again.")

        @OptionGroup var target: Target

        mutating func run() async throws {
            let id = target.id
            let ended = try await target.withUser { store, _ in
                try await store.revokeSessions(userID: id, now: Date(), by: .commandLine)
            }
            print("User \(id): \(UsersCommand.sessions(ended)) ended.")
        }
    }

    struct ResetFactors: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-factors",
            abstract:
                "Remove a user's second factors and recovery codes (they lost both): their next sign-in needs none.")

        @OptionGroup var target: Target

        mutating func run() async throws {
            let id = target.id
            // One transaction removes the factors, codes, challenges and wait, and records who did it.
            let removed = try await target.withUser { store, _ in
                try await store.removeFactors(userID: id, now: Date(), by: .commandLine)
            }
            print(
                removed == 0
                    ? "User \(id) has no second factor; nothing changed."
                    : "User \(id): \(removed) factor\(removed == 1 ? "" : "s") and the recovery codes removed.")
        }
    }

    /// "no session", "1 session", "3 sessions".
    static func sessions(_ count: Int) -> String {
        count == 0 ? "no session" : count == 1 ? "1 session" : "\(count) sessions"
    }

    /// An id as typed, quoted so that spaces or an empty id show.
    static func quoted(_ id: String) -> String {
        "\""
            + id.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 ? String($0) : $0.escaped(asASCII: true) }
            .joined() + "\""
    }

    /// How many of a user's newest audit events `show` prints.
    static let recentEvents = 20

    /// A user as text, for a person reading a terminal.
    static func describe(_ user: StoredUser, events: [RecordedAuditEvent] = []) -> String {
        var lines = [
            "User \(user.id)", "  state:      \(user.disabled ? "disabled" : "enabled")",
            "  created:    \(timestamp(user.createdAt))", "  updated:    \(timestamp(user.updatedAt))",
        ]
        if user.properties.isEmpty {
            lines.append("  properties: none")
        } else {
            lines.append("  properties:")
            for key in user.properties.keys.sorted() {
                let value = user.properties[key].map { String(decoding: $0.encoded(), as: UTF8.self) } ?? "null"
                lines.append("    \(key): \(value)")
            }
        }
        lines.append(user.identities.isEmpty ? "  identities: none" : "  identities:")
        for identity in user.identities.sorted(by: { ($0.provider, $0.subject) < ($1.provider, $1.subject) }) {
            lines.append("    \(identity.provider) \(identity.subject) (app \(identity.appID))")
            lines.append("      first seen \(timestamp(identity.firstSeen)), last seen \(timestamp(identity.lastSeen))")
            let granted =
                identity.grantedPermissions.isEmpty ? "none" : identity.grantedPermissions.joined(separator: ", ")
            lines.append("      permissions: \(granted)")
        }
        lines.append(events.isEmpty ? "  recent events: none" : "  recent events (newest first):")
        for recorded in events {
            let detail = String(decoding: recorded.event.detail.encoded(), as: UTF8.self)
            lines.append("    \(timestamp(recorded.at)) \(recorded.event.type.rawValue) \(detail)")
        }
        return lines.joined(separator: "\n")
    }

    /// A user as JSON (sorted keys, RFC 3339 dates), for scripts.
    static func json(_ user: StoredUser, events: [RecordedAuditEvent] = []) -> String {
        let identities: [JSONValue] = user.identities.map { identity in
            .object([
                "provider": .string(identity.provider), "subject": .string(identity.subject),
                "appId": .string(identity.appID),
                "grantedPermissions": .array(identity.grantedPermissions.map(JSONValue.string)),
                "firstSeen": .string(timestamp(identity.firstSeen)), "lastSeen": .string(timestamp(identity.lastSeen)),
            ])
        }
        let object: JSONValue = .object([
            "id": .string(user.id), "disabled": .bool(user.disabled), "createdAt": .string(timestamp(user.createdAt)),
            "updatedAt": .string(timestamp(user.updatedAt)), "properties": .object(user.properties),
            "identities": .array(identities),
            "recentEvents": .array(
                events.map {
                    .object([
                        "at": .string(timestamp($0.at)), "type": .string($0.event.type.rawValue),
                        "detail": $0.event.detail,
                    ])
                }),
        ])
        return String(decoding: object.encoded(), as: UTF8.self)
    }

    private static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
