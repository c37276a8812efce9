import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import LatchkeySQLite
import Testing

@testable import LatchkeyCLI
@testable import LatchkeyServer

#if canImport(Glibc)
import Glibc
#endif

/// Mistakes an operator makes deploying from docs/deployment.md, tried with the real binary as a
/// unit file or a shell would run it: each is caught before anything starts, naming what to fix.
@Suite(
    "Operator mistakes the server catches",
    .enabled(if: LatchkeyBinary.url != nil || TestEnvironment.isCI, "the latchkey binary is not built"),
    .timeLimit(.minutes(3)))
struct OperatorMistakeTests {
    /// A valid value for every setting, each written to a file of its own and named by
    /// `NAME_FILE`, as container and systemd secrets are mounted. A new setting must be added
    /// here (the test says which are missing).
    static func values(port: Int, database: String) -> [String: String] {
        let rules = Dictionary(uniqueKeysWithValues: AbuseLimitRules.settings.map { ($0.setting, "100/60") })
        return rules.merging(
            [
                "LATCHKEY_HOST": "127.0.0.1", "LATCHKEY_PORT": String(port),
                "LATCHKEY_PUBLIC_URL": "http://127.0.0.1:\(port)", "LATCHKEY_DATABASE_URL": database,
                "LATCHKEY_FACEBOOK_APP_ID": Demo.appID, "LATCHKEY_FACEBOOK_APP_SECRET": Demo.secret,
                "LATCHKEY_FACEBOOK_GRAPH_URL": "http://127.0.0.1:9/v21.0",
                "LATCHKEY_FACEBOOK_JWKS_URL": "http://127.0.0.1:9/jwks",
                "LATCHKEY_FACEBOOK_ISSUERS":
                    "https://www.facebook.com", "LATCHKEY_FACEBOOK_DIALOG_URL": "http://127.0.0.1:9/v21.0/dialog/oauth",
                "LATCHKEY_ACCESS_TOKEN_TTL": "900", "LATCHKEY_REFRESH_TOKEN_TTL": "86400",
                "LATCHKEY_ID_TOKEN_MAX_AGE": "600", "LATCHKEY_CLOCK_SKEW": "60",
                "LATCHKEY_ALLOW_MISSING_NONCE": "false",
                "LATCHKEY_REQUIRE_SERVER_NONCE": "false", "LATCHKEY_LIMITED_LOGIN_NONCE": "hashed",
                "LATCHKEY_NONCE_TTL": "600",
                "LATCHKEY_DEFAULT_FIELDS_MAPPING": "email=email", "LATCHKEY_CLIENT_MAPPABLE_PROPERTIES": "email",
                "LATCHKEY_USER_WRITABLE_PROPERTIES": "nickname", "LATCHKEY_REFRESH_PROPERTIES_ON_LOGIN": "true",
                "LATCHKEY_FACEBOOK_TIMEOUT": "5", "LATCHKEY_JWKS_REFETCH_INTERVAL": "60",
                "LATCHKEY_MAX_BODY_BYTES": "65536", "LATCHKEY_OAUTH_CLIENTS": "app=myapp://auth",
                "LATCHKEY_EASY_LOGIN_TTL": "600", "LATCHKEY_AUTHORIZATION_CODE_TTL": "60",
                "LATCHKEY_EASY_LOGIN_MAX_PENDING": "10000", "LATCHKEY_FACEBOOK_MAX_CONNECTIONS": "256",
                "LATCHKEY_FACEBOOK_STARTUP_CHECK": "off", "LATCHKEY_KEY_ENCRYPTION_KEY": kek.encoded,
                "LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS": previousKEK.encoded,
                "LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS": "false", "LATCHKEY_AUDIT_RETENTION": "86400",
                "LATCHKEY_PRUNE_INTERVAL": "300", "LATCHKEY_JOB_INTERVAL": "10",
                "LATCHKEY_FACEBOOK_JOIN_BY_BUSINESS": "true", "LATCHKEY_ANONYMOUS_USERS": "on",
                "LATCHKEY_ANONYMOUS_USER_TTL": "86400", "LATCHKEY_LINK_TICKET_TTL": "600",
                "LATCHKEY_REAUTHENTICATION_WINDOW": "600", "LATCHKEY_TRUSTED_PROXIES": "127.0.0.1/32",
                "LATCHKEY_KEY_REFRESH_INTERVAL": "60", "LATCHKEY_KEY_ACTIVATION_DELAY": "600",
                "LATCHKEY_REFRESH_RETRY_WINDOW": "10", "LATCHKEY_FORWARDED_HEADER": "x-forwarded-for",
                "LATCHKEY_FACEBOOK_MAX_IN_FLIGHT": "256", "LATCHKEY_FACEBOOK_REJECTION_TTL": "60",
                "LATCHKEY_FACEBOOK_USAGE_WARN_PERCENT": "80", "LATCHKEY_FACEBOOK_USAGE_TIGHTEN_PERCENT": "95",
                "LATCHKEY_REQUEST_TIMEOUT": "10", "LATCHKEY_DATABASE_POOL_SIZE": "10", "LATCHKEY_DATABASE_TIMEOUT": "5",
                "LATCHKEY_IDLE_TIMEOUT": "75", "LATCHKEY_FIRST_REQUEST_TIMEOUT": "10",
                "LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS": "64", "LATCHKEY_MAX_CONNECTIONS": "4096",
                "LATCHKEY_APPLE_CLIENT_IDS": "com.example.app", "LATCHKEY_APPLE_TEAM_ID": "ABCDE12345",
                "LATCHKEY_APPLE_KEY_ID": "KEY1234567", "LATCHKEY_APPLE_PRIVATE_KEY": appleKey,
                "LATCHKEY_APPLE_URL": "https://appleid.apple.com", "LATCHKEY_APPLE_TIMEOUT": "10",
                "LATCHKEY_APPLE_FIELDS_MAPPING": "email=email", "LATCHKEY_SIGNED_REQUEST_MAX_AGE": "86400",
                "LATCHKEY_DEAUTHORIZE_ENDS": "identity-sessions", "LATCHKEY_DATA_DELETION_POLICY": "queue",
                "LATCHKEY_NODE_NAME": "node-1", "LATCHKEY_TOTP_ISSUER": "Example App", "LATCHKEY_TOTP_SKEW_STEPS": "1",
                "LATCHKEY_TOTP_MAX_ATTEMPTS": "5", "LATCHKEY_MFA_CHALLENGE_TTL": "300",
                "LATCHKEY_ADMIN_LISTEN": "127.0.0.1:0", "LATCHKEY_LOG_FORMAT": "json", "LATCHKEY_ACCESS_LOG": "true",
            ]
        ) { _, given in given }
    }
    static let kek = KeyEncryptionKey.generate()
    /// A Sign in with Apple key as Apple's `.p8` holds it (PKCS #8 PEM).
    static let appleKey = P256.Signing.PrivateKey().pemRepresentation
    static let previousKEK = KeyEncryptionKey.generate()

    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-operator-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The test's environment without any `LATCHKEY_…` variable, plus `settings`.
    static func environment(_ settings: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") }.merging(settings) { _, new in new
        }
    }

    static func latchkey(
        _ arguments: [String], _ environment: [String: String]
    ) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(try #require(LatchkeyBinary.url), arguments, environment: environment)
    }

    @Test("every setting given as NAME_FILE works with serve, keys and db, LATCHKEY_DATABASE_URL_FILE included")
    func everySettingFromFiles() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // serve gets as far as it can without running forever: through every setting, the
        // database and its keys, up to the port, which is held.
        let held = try HeldPort.hold()
        defer { close(held.descriptor) }
        let database = directory.appendingPathComponent("data/latchkey.sqlite").path
        let values = Self.values(port: held.port, database: database)
        let missing = Set(ServerConfiguration.settingNames).subtracting(values.keys)
        #expect(missing.isEmpty, "settings without a value in this test: \(missing.sorted())")
        let files = directory.appendingPathComponent("settings")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        var settings: [String: String] = [:]
        for (name, value) in values {
            let file = files.appendingPathComponent(name)
            try (value + "\n").write(to: file, atomically: true, encoding: .utf8)
            settings[name + "_FILE"] = file.path
        }
        let environment = Self.environment(settings)

        let serve = try await Self.latchkey(["serve"], environment)
        #expect(serve.status != 0)
        #expect(serve.output.contains("cannot listen on 127.0.0.1:\(held.port)"), "\(serve.output)")
        #expect(!serve.output.contains("not both"))
        let list = try await Self.latchkey(["keys", "list"], environment)
        #expect(list.status == 0 && list.output.contains("signing"), "\(list.output)")
        // As docs/deployment.md runs it: the key-encryption key piped from a file only root reads.
        var piped = environment
        piped["LATCHKEY_KEY_ENCRYPTION_KEY_FILE"] = "/dev/stdin"
        let fromStdin = try await ChildProcess.run(
            try #require(LatchkeyBinary.url), ["keys", "list"], environment: piped,
            input: Data((Self.kek.encoded + "\n").utf8))
        #expect(fromStdin.status == 0 && fromStdin.output.contains("signing"), "\(fromStdin.output)")
        let rotate = try await Self.latchkey(["keys", "rotate"], environment)
        #expect(rotate.status == 0 && rotate.output.contains("New signing key"), "\(rotate.output)")
        let migrate = try await Self.latchkey(["db", "migrate"], environment)
        #expect(migrate.status == 0 && migrate.output.contains("is migrated"), "\(migrate.output)")
        let backupPath = directory.appendingPathComponent("backup.sqlite").path
        let backup = try await Self.latchkey(["db", "backup", backupPath], environment)
        #expect(backup.status == 0 && FileManager.default.fileExists(atPath: backupPath), "\(backup.output)")
        // db copy takes its destination from the same settings: here an SQLite file, refused by name.
        let copy = try await Self.latchkey(["db", "copy", "--from", backupPath], environment)
        #expect(copy.status != 0 && copy.output.contains("the destination must be a PostgreSQL URL"), "\(copy.output)")
        #expect(!copy.output.contains("--to"), "the destination was read from LATCHKEY_DATABASE_URL_FILE")
        for output in [serve.output, list.output, rotate.output, migrate.output, backup.output, copy.output] {
            #expect(!output.contains(Self.kek.encoded) && !output.contains(Demo.secret))
        }
    }

    @Test(
        "a misspelt LATCHKEY_ variable stops serve, keys and db, naming the closest setting",
        arguments: [["serve"], ["keys", "list"], ["db", "migrate"]])
    func misspeltVariable(_ command: [String]) async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let held = try HeldPort.hold()
        defer { close(held.descriptor) }
        let environment = Self.environment([
            "LATCHKEY_TRUSTED_PROXY": "127.0.0.1/32", "LATCHKEY_PORT": String(held.port),
            "LATCHKEY_DATABASE_URL": directory.appendingPathComponent("latchkey.sqlite").path,
            "LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS": "true", "LATCHKEY_FACEBOOK_APP_ID": Demo.appID,
            "LATCHKEY_FACEBOOK_APP_SECRET": Demo.secret, "LATCHKEY_FACEBOOK_STARTUP_CHECK": "off",
        ])
        let (status, output) = try await Self.latchkey(command, environment)
        #expect(status != 0)
        #expect(output.contains("LATCHKEY_TRUSTED_PROXY") && output.contains("did you mean LATCHKEY_TRUSTED_PROXIES?"))
        // Nothing was started or created.
        #expect(!output.contains("cannot listen") && !output.contains("is migrated"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("latchkey.sqlite").path))
    }

    @Test("variables of other commands and of the project's scripts are not taken for typos")
    func otherVariables() throws {
        try Settings.checkNames(in: [
            "LATCHKEY_SERVER_URL": "x", "LATCHKEY_EMULATOR_PORT": "1", "LATCHKEY_CONFIG_FILE": "/x",
            "LATCHKEY_TEST_POSTGRES_URL": "x", "LATCHKEY_FUZZ_SECONDS": "1", "LATCHKEY_PORT_FILE": "/x", "HOME": "/",
        ])
        #expect { try Settings.checkNames(in: ["LATCHKEY_PROT": "1"]) } throws: {
            "\($0)".contains("did you mean LATCHKEY_PORT?")
        }
    }

    @Test("a second server on one SQLite file refuses to start, naming the file and PostgreSQL")
    func twoServersOneFile() async throws {
        let binary = try #require(LatchkeyBinary.url)
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("latchkey.sqlite").path
        let servers = ChildServers(binary: binary, database: database, emulator: "http://127.0.0.1:9")
        defer { servers.killAll() }
        let first = try await servers.start()
        let second = try await Self.latchkey(["serve"], servers.environment)
        #expect(second.status != 0)
        #expect(
            second.output.contains("another Latchkey server is already using the SQLite database \(database)"),
            "\(second.output)")
        #expect(second.output.contains("PostgreSQL") && !second.output.contains("listening on"))
        // The first one goes on serving.
        let health = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: first.url + "/health"), timeout: .seconds(30))
        #expect(health.status == .ok)
        // Once it is gone (SIGKILL: nothing to clean up), the file serves again.
        first.kill()
        await first.exited()
        let third = try await servers.start()
        third.kill()
        await third.exited()
    }

    @Test("a relative database path: the error names the working directory, the banner the resolved file")
    func relativePath() async throws {
        let binary = try #require(LatchkeyBinary.url)
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A file where a directory must be: fails for root too (the tests may run as root).
        try Data().write(to: directory.appendingPathComponent("blocked"))
        let environment = ChildServers(
            binary: binary, database: "blocked/latchkey.sqlite", emulator: "http://127.0.0.1:9"
        ).environment
        let output = try await ChildProcess.run(binary, ["serve"], environment: environment, directory: directory)
            .output
        let resolved = directory.resolvingSymlinksInPath().path
        #expect(output.contains("the path is relative, taken in the working directory"), "\(output)")
        #expect(output.contains(resolved) || output.contains(directory.path))
        #expect(output.contains("absolute"))
        // Started well, the banner says where the data is.
        let servers = ChildServers(
            binary: binary, database: "data/latchkey.sqlite", emulator: "http://127.0.0.1:9", directory: directory)
        defer { servers.killAll() }
        let server = try await servers.start()
        let banner = server.printed
        #expect(
            banner.contains("Database: \(resolved)/data/latchkey.sqlite")
                || banner.contains("Database: \(directory.path)/data/latchkey.sqlite"), "\(banner)")
    }

    @Test("keys commands without the servers' key-encryption key name the settings that point at it")
    func keysWithoutKEK() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("latchkey.sqlite").path
        for arguments in [["list"], ["rotate"]] {
            let options = ["--database-url", database]
            var command = try #require(try KeysCommand.parseAsRoot(arguments + options) as? any AsyncParsableCommand)
            await #expect {
                try await command.run()
            } throws: { error in
                let text = "\(error)"
                return text.contains("LATCHKEY_KEY_ENCRYPTION_KEY_FILE") && text.contains("LoadCredential")
                    && !text.contains("generate-kek") && !text.contains("LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS=true")
            }
        }
    }
}
