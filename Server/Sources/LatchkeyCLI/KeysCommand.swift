import ArgumentParser
import Foundation
import LatchkeyServer
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `latchkey keys`: session signing keys and the key-encryption key they are sealed under.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Manage session signing keys and their key-encryption key.",
        subcommands: [List.self, Rotate.self, Rewrap.self, GenerateKEK.self])

    /// The options every command that opens the database shares.
    struct DatabaseOptions: ParsableArguments {
        @Option(help: "A file of LATCHKEY_NAME=value lines.")
        var config: String?

        @Option(help: "SQLite path or URL (LATCHKEY_DATABASE_URL).")
        var databaseURL: String?

        @Flag(help: "Use the database and settings of `latchkey serve --dev`.")
        var dev = false

        @Option(
            name: .customLong("run-as"),
            help: """
                Started as root: read the settings and their secret files (root-only, such as /etc/latchkey/kek), \
                then continue as this user (the service's) before opening the database.
                """)
        var runAs: String?

        /// The configuration from the file and the environment, with `--database-url` over them:
        /// the same database `serve` (or, with `--dev`, `serve --dev`) uses from this directory.
        /// With `--run-as`, the process is that user once it returns (the secrets already read).
        func configuration(checkingKeyProtection: Bool = true) throws -> ServerConfiguration {
            var settings = try Settings.load(configFile: config)
            Settings.set("LATCHKEY_DATABASE_URL", to: databaseURL, in: &settings)
            if dev { DevMode.apply(to: &settings, emulatorPort: 8090) }
            Settings.defaultingDatabase(&settings)
            // These commands never talk to Facebook: the app secret, which an operator's shell
            // usually lacks (systemd hands it to the service only), is neither needed nor checked.
            for name in ["LATCHKEY_FACEBOOK_APP_ID", "LATCHKEY_FACEBOOK_APP_SECRET"] {
                settings[name] = nil
                settings[name + "_FILE"] = nil
            }
            let configuration = try Settings.configuration(settings)
            if let runAs { try ServiceUser.become(runAs) }
            guard checkingKeyProtection else { return configuration }
            guard configuration.secrets.keyEncryptionKey == nil, !configuration.secrets.allowPlaintextSigningKeys else {
                return configuration
            }
            // serve's advice (create a key, or go unencrypted) is wrong here: the stored keys are
            // sealed under the servers' key, and only that key opens them.
            throw ValidationError(
                """
                this command opens the session signing keys, which are sealed under the servers' key-encryption key, \
                and none is set here. Point LATCHKEY_KEY_ENCRYPTION_KEY_FILE at the file the servers use (under \
                systemd, the one the unit's LoadCredential=kek:… reads, such as /etc/latchkey/kek: the unit hands it \
                to the service, not to your shell); a new key would open nothing stored. docs/deployment.md (section \
                6) shows the command. `serve --dev`'s database keeps its keys unsealed: add --dev for it.
                """)
        }

        /// Runs `body` on the migrated store of an existing installation, closing it afterwards.
        func withStore<T>(
            _ configuration: ServerConfiguration, _ body: (any LatchkeyStore) async throws -> T
        ) async throws -> T {
            try await StoreOpening.withStore(configuration, logger: Logger(label: "latchkey"), mustExist: true) {
                try await body($0.store)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: """
                Show the session signing keys: id, role (signing, pending, verifying, retired), created, retired, \
                and which key-encryption key opens each.
                """,
            discussion: """
                Exits 1 when a signing, pending or verifying key opens under neither LATCHKEY_KEY_ENCRYPTION_KEY nor \
                one of LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS: servers with these settings cannot use it.
                """)

        @OptionGroup var options: DatabaseOptions

        mutating func run() async throws {
            let configuration = try options.configuration()
            let keys = try await options.withStore(configuration) { store in try await store.signingKeys() }
            let listing = Self.listing(keys, configuration: configuration, now: Date())
            for line in listing.lines { print(line) }
            guard listing.unusable.isEmpty else {
                throw CommandError(
                    listing.unusable.map { "\($0.role) key \($0.kid) does not open: \($0.reason)" }
                        .joined(separator: "; ")
                        + ". Servers with these settings cannot use it: give them the key-encryption key it was "
                        + "sealed under (LATCHKEY_KEY_ENCRYPTION_KEY_FILE, or LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS_FILE)."
                )
            }
        }

        /// The table's lines, and the keys in use (signing, pending, verifying) that servers with
        /// `configuration` could not use.
        static func listing(
            _ keys: [StoredSigningKey], configuration: ServerConfiguration, now: Date
        ) -> (lines: [String], unusable: [(kid: String, role: SigningKeyRole, reason: String)]) {
            let protection = SigningKeyProtection(configuration)
            let roles = SigningKeyRole.roles(
                keys.map { ($0.kid, $0.createdAt, $0.retiredAt) }, now: now,
                accessTokenLifetime: configuration.sessions.accessTokenLifetime,
                activationDelay: configuration.sessions.keyActivationDelay)
            let format = Date.ISO8601FormatStyle()
            func column(_ text: String, _ width: Int) -> String {
                text.padding(toLength: width, withPad: " ", startingAt: 0)
            }
            var lines = [
                column("KID", 24) + column("ROLE", 11) + column("CREATED", 23) + column("RETIRED", 23) + "OPENS UNDER"
            ]
            var unusable: [(kid: String, role: SigningKeyRole, reason: String)] = []
            for key in keys.sorted(by: { $0.createdAt < $1.createdAt }) {
                let role = roles[key.kid]
                let retired = role.map { $0.shownRetirement(key.retiredAt) } ?? key.retiredAt
                let opening = SigningKeyOpening(key, protection: protection)
                lines.append(
                    column(key.kid, 24) + column(role?.rawValue ?? "?", 11)
                        + column(key.createdAt.formatted(format), 23)
                        + column(retired.map { $0.formatted(format) } ?? "-", 23)
                        + opening.shown)
                if let role, role != .retired, !opening.usable(under: protection) {
                    let reason =
                        switch opening {
                        case .refused(let reason): reason
                        default:
                            "stored unsealed while LATCHKEY_KEY_ENCRYPTION_KEY is set (`keys rewrap --seal-plain-keys`)"
                        }
                    unusable.append((key.kid, role, reason))
                }
            }
            return (lines, unusable)
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Add a new signing key; running servers publish it, then sign with it after the activation delay.",
            discussion: """
                Every running server reads the keys every LATCHKEY_KEY_REFRESH_INTERVAL seconds (60) and publishes the \
                new key in its JWKS; all of them start signing with it once it is LATCHKEY_KEY_ACTIVATION_DELAY \
                seconds old (600), so every server and every app backend caching the JWKS knows it first.
                """)

        @OptionGroup var options: DatabaseOptions

        mutating func run() async throws {
            let configuration = try options.configuration()
            let protection = SigningKeyProtection(configuration)
            // Every stored key is opened first: a new key sealed under a key-encryption key the
            // servers do not have would stop their next start.
            let kid = try await options.withStore(configuration) { store in
                try await rotateSigningKey(in: store, protection: protection, now: Date())
            }
            print(
                """
                New signing key \(kid): published by running servers within \(Int(configuration.sessions.keyRefreshInterval)) s, \
                signing after \(Int(configuration.sessions.keyActivationDelay)) s; previous keys stay published until their tokens expire.
                """)
        }
    }

    struct Rewrap: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seal every signing key under the current key-encryption key.",
            discussion: """
                Set LATCHKEY_KEY_ENCRYPTION_KEY_FILE to the new key and LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS_FILE to \
                the old one(s). Servers started with both settings do the same on start; afterwards the old keys \
                can be removed from the settings. With --seal-plain-keys it is also the one step that seals the \
                keys of a database from before encryption (every key plain), which servers with a key-encryption \
                key refuse.
                """)

        @OptionGroup var options: DatabaseOptions

        @Flag(
            help: """
                Also seal keys stored unencrypted, when every key is (a database from before encryption). Check \
                the ids and dates listed first: keys swapped in by someone who can write the database look the same.
                """)
        var sealPlainKeys = false

        mutating func run() async throws {
            let configuration = try options.configuration()
            guard let current = configuration.secrets.keyEncryptionKey else {
                throw ValidationError("LATCHKEY_KEY_ENCRYPTION_KEY_FILE must name the key to seal under")
            }
            let sealPlainKeys = self.sealPlainKeys
            let count = try await options.withStore(configuration) { store in
                if sealPlainKeys {
                    for key in try await store.signingKeys() where !SigningKeyProtection.isSealed(key.privateKey) {
                        print("Sealing plain key \(key.kid), created \(key.createdAt.formatted(.iso8601)).")
                    }
                }
                return try await resealSigningKeys(
                    in: store, protection: SigningKeyProtection(configuration), sealingPlainKeys: sealPlainKeys)
            }
            print("Sealed \(count) signing key(s) under key-encryption key \(current.id).")
        }
    }

    struct GenerateKEK: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate-kek",
            abstract: "Create a key-encryption key (32 random bytes, base64url) for LATCHKEY_KEY_ENCRYPTION_KEY_FILE.")

        @Option(help: "Write it to this new file, readable by its owner only (0600), instead of standard output.")
        var output: String?

        mutating func run() async throws {
            let (key, encoded) = KeyEncryptionKey.generate()
            guard let output else {
                print(encoded)
                return
            }
            // Created 0600 in one step (never readable by others, whatever the umask), and never
            // over an existing file: overwriting a key-encryption key loses every key sealed under it.
            let descriptor = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw CommandError("cannot create \(output): \(String(cString: strerror(errno)))")
            }
            let bytes = Array((encoded + "\n").utf8)
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            let synced = fsync(descriptor)
            close(descriptor)
            guard written == bytes.count, synced == 0 else {
                unlink(output)
                throw CommandError("cannot write \(output)")
            }
            print("Key-encryption key \(key.id) written to \(output).")
        }
    }
}
