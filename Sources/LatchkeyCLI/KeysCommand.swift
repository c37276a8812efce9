import ArgumentParser
import Foundation
import LatchkeySQLite
import LatchkeyServer

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
        subcommands: [Rotate.self, Rewrap.self, GenerateKEK.self])

    /// The options every command that opens the database shares.
    struct DatabaseOptions: ParsableArguments {
        @Option(help: "A file of LATCHKEY_NAME=value lines.")
        var config: String?

        @Option(help: "SQLite path or URL (LATCHKEY_DATABASE_URL).")
        var databaseURL: String?

        /// The configuration from the file and the environment, with `--database-url` over them.
        func configuration() throws -> ServerConfiguration {
            var settings = try Settings.load(configFile: config)
            if let databaseURL { settings["LATCHKEY_DATABASE_URL"] = databaseURL }
            settings["LATCHKEY_DATABASE_URL"] = settings["LATCHKEY_DATABASE_URL"] ?? "latchkey-data/latchkey.sqlite"
            let configuration = try Settings.configuration(settings)
            do {
                try configuration.validateSigningKeyProtection()
            } catch {
                throw ValidationError("\(error)")
            }
            return configuration
        }

        /// Runs `body` on the migrated store, closing it afterwards.
        func withStore<T>(
            _ configuration: ServerConfiguration, _ body: (SQLiteStore) async throws -> T
        ) async throws -> T {
            let store = try await SQLiteStore.open(try DatabaseLocation(configuration.databaseURL))
            do {
                try await store.migrate()
                let result = try await body(store)
                try await store.close()
                return result
            } catch {
                try? await store.close()
                throw error
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a new signing key; running servers use it after their next start.")

        @OptionGroup var options: DatabaseOptions

        mutating func run() async throws {
            let configuration = try options.configuration()
            let protection = SigningKeyProtection(configuration)
            // Every stored key is opened first: a new key sealed under a key-encryption key the
            // servers do not have would stop their next start.
            let kid = try await options.withStore(configuration) { store in
                try await rotateSigningKey(in: store, protection: protection, now: Date())
            }
            print("New signing key \(kid); previous keys stay published until their tokens expire.")
        }
    }

    struct Rewrap: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seal every signing key under the current key-encryption key.",
            discussion: """
                Set LATCHKEY_KEY_ENCRYPTION_KEY_FILE to the new key and LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS_FILE to \
                the old one(s). Servers started with both settings do the same on start; afterwards the old keys \
                can be removed from the settings.
                """)

        @OptionGroup var options: DatabaseOptions

        mutating func run() async throws {
            let configuration = try options.configuration()
            guard let current = configuration.keyEncryptionKey else {
                throw ValidationError("LATCHKEY_KEY_ENCRYPTION_KEY_FILE must name the key to seal under")
            }
            let count = try await options.withStore(configuration) { store in
                try await resealSigningKeys(in: store, protection: SigningKeyProtection(configuration))
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
