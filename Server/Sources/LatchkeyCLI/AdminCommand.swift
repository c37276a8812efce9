import ArgumentParser
import Foundation
import LatchkeyServer

/// `latchkey admin`: what operators need before they can use the admin API and the console.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Manage the admin API's keys.", subcommands: [Keys.self])

    /// `latchkey admin keys`: made, listed and revoked on the database itself, so a key is never
    /// needed to make another (a leaked key cannot mint more).
    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "keys", abstract: "Create, list and revoke admin keys.",
            subcommands: [Create.self, List.self, Revoke.self])
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an admin key; it is printed once, alone on the last line, and stored only as a hash.")

        @Option(
            help: "What the key is for (`ops-laptop`, `grafana`): shown in lists and in every audit event it causes.")
        var name: String

        @OptionGroup var options: KeysCommand.DatabaseOptions

        mutating func validate() throws {
            guard AdminCommand.isValidName(name) else {
                throw ValidationError("--name must be 1 to 64 printable characters")
            }
        }

        mutating func run() async throws {
            let configuration = try options.configuration(checkingKeyProtection: false)
            let secret = AdminKeySecret.generate()
            let key = StoredAdminKey(id: secret.id, name: name, hash: secret.hash, createdAt: Date())
            try await options.withStore(configuration) { store in try await store.createAdminKey(key, by: .commandLine)
            }
            print("Admin key \(key.id) (\(key.name)) created. It is shown once; keep it in a secret store:")
            print(secret.text)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the admin keys: id, name, created, last used, revoked (never a secret).")

        @OptionGroup var options: KeysCommand.DatabaseOptions

        mutating func run() async throws {
            let configuration = try options.configuration(checkingKeyProtection: false)
            let keys = try await options.withStore(configuration) { store in try await store.adminKeys() }
            let format = Date.ISO8601FormatStyle()
            let stamp = { (date: Date?) in date.map { $0.formatted(format) } ?? "-" }
            print(
                "ID                NAME                  CREATED               LAST USED             REVOKED")
            for key in keys {
                print(
                    [
                        key.id.padding(toLength: 18, withPad: " ", startingAt: 0),
                        String(key.name.prefix(21)).padding(toLength: 22, withPad: " ", startingAt: 0),
                        stamp(key.createdAt).padding(toLength: 22, withPad: " ", startingAt: 0),
                        stamp(key.lastUsedAt).padding(toLength: 22, withPad: " ", startingAt: 0), stamp(key.revokedAt),
                    ].joined())
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke an admin key: every server refuses it from its next call.")

        @Argument(help: "The key's id (the part after `lka_`, from `latchkey admin keys list`).")
        var id: String

        @OptionGroup var options: KeysCommand.DatabaseOptions

        mutating func run() async throws {
            let configuration = try options.configuration(checkingKeyProtection: false)
            let id =
                id.hasPrefix(AdminKeySecret.prefix) ? String(id.dropFirst(AdminKeySecret.prefix.count).prefix(16)) : id
            let key = try await options.withStore(configuration) { store in
                try await store.revokeAdminKey(id: id, now: Date(), by: .commandLine)
            }
            guard let key else {
                throw CommandError(
                    "no admin key has the id \(UsersCommand.quoted(id)) in \(StoreOpening.displayName(configuration)); "
                        + "`latchkey admin keys list` shows them.")
            }
            print("Admin key \(key.id) (\(key.name)) is revoked.")
        }
    }

    /// A key's name: 1 to 64 characters, none of them a control character.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64
            && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
