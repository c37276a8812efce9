import Foundation
import LatchkeyServer
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// docs/deployment.md's operator commands exactly as an operator pastes them: run as the
/// service's user (`runuser -u`, as `sudo -u` would), the secrets in root-only files piped in or
/// read by root before the command becomes that user (`--run-as`). The machine's tests run as
/// root; `scripts/test-setup` creates the user `latchkey-test`. Each test spawns a few short
/// commands: 1.4–2.1 s each, the PostgreSQL move the slowest (measured alone, copies included).
@Suite(
    "Operator commands as the service's user",
    .enabled(
        if: (LatchkeyBinary.url != nil && ServiceUserInstallation.available) || TestEnvironment.isCI,
        "needs the latchkey binary, root and the user latchkey-test (scripts/test-setup)"),
    .timeLimit(.minutes(3)))
struct ServiceUserCommandTests {
    @Test("deployment §6: the key-encryption key piped from a root-only file to `keys rotate` run as the user")
    func pipedKeyEncryptionKey() async throws {
        let installation = try await ServiceUserInstallation.make()
        defer { installation.remove() }
        // sudo cat /etc/latchkey/kek | sudo -u latchkey env LATCHKEY_KEY_ENCRYPTION_KEY_FILE=/dev/stdin \
        //     latchkey keys rotate --config /etc/latchkey/env
        let rotate = try await installation.asUser(
            ["LATCHKEY_KEY_ENCRYPTION_KEY_FILE=/dev/stdin"], ["keys", "rotate", "--config", installation.env],
            input: installation.kek)
        #expect(rotate.status == 0 && rotate.output.contains("New signing key"), "\(rotate.output)")
        let list = try await installation.asUser(
            ["LATCHKEY_KEY_ENCRYPTION_KEY_FILE=-"], ["keys", "list", "--config", installation.env],
            input: installation.kek)
        #expect(list.status == 0 && list.output.contains("current "), "\(list.output)")
        // Two settings on one pipe: refused by name, rather than the second read empty.
        let both = try await installation.asUser(
            ["LATCHKEY_KEY_ENCRYPTION_KEY_FILE=/dev/stdin", "LATCHKEY_DATABASE_URL_FILE=/dev/stdin"],
            ["keys", "list", "--config", installation.env], input: installation.kek)
        #expect(both.status != 0 && both.output.contains("carries one secret"), "\(both.output)")
        #expect(!(rotate.output + list.output + both.output).contains(installation.kekText))
    }

    @Test("--run-as: root reads the secrets, then the command runs as the user (what it writes is the user's)")
    func runAs() async throws {
        let installation = try await ServiceUserInstallation.make()
        defer { installation.remove() }
        let backup = installation.data.appendingPathComponent("backup.sqlite").path
        let asRoot = try await installation.asRoot(
            ["LATCHKEY_KEY_ENCRYPTION_KEY_FILE=\(installation.etc.appendingPathComponent("kek").path)"],
            ["db", "backup", backup, "--config", installation.env, "--run-as", ServiceUserInstallation.user])
        #expect(asRoot.status == 0, "\(asRoot.output)")
        let owner = try FileManager.default.attributesOfItem(atPath: backup)[.ownerAccountName] as? String
        #expect(owner == ServiceUserInstallation.user)
        // Anyone but root is refused: --run-as never becomes a way to another user's files.
        let refused = try await installation.asUser(
            [], ["keys", "list", "--config", installation.env, "--run-as", "root"], input: nil)
        #expect(refused.status != 0 && refused.output.contains("needs root"), "\(refused.output)")
    }

    @Test("deployment §8: db copy with the URL piped in, then every --config command on PostgreSQL")
    func moveToPostgres() async throws {
        guard let base = try TestPostgres.url() else { return }
        let installation = try await ServiceUserInstallation.make()
        defer { installation.remove() }
        let rotate = try await installation.asUser(
            ["LATCHKEY_KEY_ENCRYPTION_KEY_FILE=/dev/stdin"], ["keys", "rotate", "--config", installation.env],
            input: installation.kek)
        try #require(rotate.status == 0, "\(rotate.output)")
        try await TestPostgres.withSchema(base) { url in
            // Step 3: the URL, with its password, in a root-only file, piped to the copy.
            let databaseURL = try installation.secret("database-url", PostgresStoreTests.text(url))
            let copy = try await installation.asUser(
                ["LATCHKEY_DATABASE_URL_FILE=/dev/stdin"],
                ["db", "copy", "--from", "sqlite:" + installation.database], input: databaseURL)
            #expect(copy.status == 0 && copy.output.contains("row counts verified"), "\(copy.output)")
            // Step 4: no LATCHKEY_DATABASE_URL in the settings file any more.
            try installation.writeEnv(database: nil)
            let secrets = [
                "LATCHKEY_KEY_ENCRYPTION_KEY_FILE=" + installation.etc.appendingPathComponent("kek").path,
                "LATCHKEY_DATABASE_URL_FILE=" + installation.etc.appendingPathComponent("database-url").path,
            ]
            let asUser = ["--config", installation.env, "--run-as", ServiceUserInstallation.user]
            let migrate = try await installation.asRoot(secrets, ["db", "migrate"] + asUser)
            #expect(migrate.status == 0 && migrate.output.contains("Database postgres://"), "\(migrate.output)")
            let rotated = try await installation.asRoot(secrets, ["keys", "rotate"] + asUser)
            #expect(rotated.status == 0 && rotated.output.contains("New signing key"), "\(rotated.output)")
            let list = try await installation.asRoot(secrets, ["keys", "list"] + asUser)
            #expect(list.status == 0, "\(list.output)")
            #expect(list.output.components(separatedBy: "current ").count - 1 == 2, "\(list.output)")
            let password = url.password ?? "latchkey"
            for output in [copy.output, migrate.output, rotated.output, list.output] {
                #expect(!output.contains(installation.kekText) && !output.contains(":\(password)@"))
            }
        }
    }
}

/// An installation laid out as docs/deployment.md's: `etc` (root, group the user, 0750) with the
/// root-only key-encryption key and a settings file the group reads; `data` (the user's, 0700)
/// with a migrated SQLite database.
struct ServiceUserInstallation {
    static let user = "latchkey-test"
    static let runuser = "/usr/sbin/runuser"

    /// Root, the user and runuser are there.
    static let available: Bool =
        geteuid() == 0 && getpwnam(user) != nil && FileManager.default.isExecutableFile(atPath: runuser)

    let root: URL
    let etc: URL
    let data: URL
    let kekText: String

    var env: String { etc.appendingPathComponent("env").path }
    /// The binary, installed where the user can run it.
    var binary: String { root.appendingPathComponent("latchkey").path }
    var database: String { data.appendingPathComponent("latchkey.sqlite").path }
    var kek: Data { Data((kekText + "\n").utf8) }

    static func make() async throws -> ServiceUserInstallation {
        let entry = try #require(getpwnam(user), "no user \(user): run scripts/test-setup as root")
        let (uid, gid) = (entry.pointee.pw_uid, entry.pointee.pw_gid)
        // /tmp, not TMPDIR, and a copy of the binary (0.1 s): the user must reach both, wherever
        // the checkout lives (a build under /root is root's alone).
        let root = URL(fileURLWithPath: "/tmp").appendingPathComponent("latchkey-service-\(UUID())")
        let etc = root.appendingPathComponent("etc")
        let data = root.appendingPathComponent("data")
        for (directory, mode) in [(root, 0o755), (etc, 0o750), (data, 0o700)] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            chmod(directory.path, mode_t(mode))
        }
        try FileManager.default.copyItem(
            at: try #require(LatchkeyBinary.url), to: root.appendingPathComponent("latchkey"))
        chown(etc.path, 0, gid)
        chown(data.path, uid, gid)
        let installation = ServiceUserInstallation(
            root: root, etc: etc, data: data, kekText: KeyEncryptionKey.generate().encoded)
        // A failed setup removes what it made: the caller's `defer` is not set yet.
        do {
            _ = try installation.secret("kek", installation.kekText)
            try installation.writeEnv(database: installation.database)
            let migrate = try await installation.asUser(
                [], ["db", "migrate", "--config", installation.env], input: nil)
            try #require(migrate.status == 0, "\(migrate.output)")
        } catch {
            installation.remove()
            throw error
        }
        return installation
    }

    /// Writes a root-only (0600) file in `etc`; returns its contents, as `sudo cat` would pipe them.
    func secret(_ name: String, _ value: String) throws -> Data {
        let file = etc.appendingPathComponent(name)
        try (value + "\n").write(to: file, atomically: true, encoding: .utf8)
        chmod(file.path, 0o600)
        return Data((value + "\n").utf8)
    }

    /// The settings file (root, group the user, 0640), naming `database` when given.
    func writeEnv(database: String?) throws {
        var text = "LATCHKEY_DATABASE_TIMEOUT=\(TestPostgres.timeout.components.seconds)\n"
        if let database { text += "LATCHKEY_DATABASE_URL=\(database)\n" }
        try text.write(toFile: env, atomically: true, encoding: .utf8)
        chmod(env, 0o640)
        chown(env, 0, getpwnam(Self.user)?.pointee.pw_gid ?? 0)
    }

    /// `runuser -u latchkey-test -- env ASSIGNMENTS latchkey ARGUMENTS`, with `input` piped in by
    /// root (the pipe is root's, as `sudo cat … |` makes it the operator's).
    func asUser(
        _ assignments: [String], _ arguments: [String], input: Data?
    ) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(
            URL(fileURLWithPath: Self.runuser),
            ["-u", Self.user, "--", "/usr/bin/env"] + assignments + [binary] + arguments,
            environment: Self.environment, input: input, directory: root)
    }

    /// `env ASSIGNMENTS latchkey ARGUMENTS` as root (as `sudo env … latchkey …` runs it).
    func asRoot(_ assignments: [String], _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"), assignments + [binary] + arguments, environment: Self.environment,
            directory: root)
    }

    /// The test's environment without its `LATCHKEY_…` variables.
    static var environment: [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") }
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
}
