import ArgumentParser
import Crypto
import FacebookEmulator
import Foundation
import Hummingbird
import Logging
import NIOCore

/// `latchkey emulator`: a local Facebook (dialog, tokens, Graph, OIDC, test users, controls).
struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Run the Facebook emulator.",
        discussion: """
            Each option can also be set in the environment: LATCHKEY_EMULATOR_HOST, LATCHKEY_EMULATOR_PORT, \
            LATCHKEY_EMULATOR_SEED, LATCHKEY_EMULATOR_PUBLIC_URL, LATCHKEY_EMULATOR_ISSUER, \
            LATCHKEY_EMULATOR_APPLE_KEY. Flags win.

            With --apple-key, Apple's side runs too (/auth/keys, /auth/token, /auth/revoke and \
            /_emulator/apple/…): give it the Sign in with Apple key the server signs client secrets \
            with (the server's LATCHKEY_APPLE_PRIVATE_KEY_FILE), whose public half checks them.
            """
    )

    @Option(help: "Address to bind (loopback by default: the control API has no authentication).")
    var host: String?

    @Option(help: "Port to bind (0 picks a free one).")
    var port: Int?

    @Option(help: "JSON seed file with apps, users and optional signing keys (default: the demo world).")
    var seed: String?

    @Option(help: "Base URL handed out in discovery, picture and login URLs (default: from each request's Host).")
    var publicURL: String?

    @Option(help: "The iss of id tokens.")
    var issuer: String?

    @Option(help: "The team's Sign in with Apple key (.p8, PEM): turns Apple's side on.")
    var appleKey: String?

    @Option(help: "With --apple-key: the team id client secrets must name.")
    var appleTeamID: String = AppleRegistration.demoTeamID

    @Option(help: "With --apple-key: the key id client secrets must name.")
    var appleKeyID: String = AppleRegistration.demoKeyID

    // Named by hand: derived from the property, the flag was `--apple-client-i-ds`.
    @Option(
        name: .customLong("apple-client-ids"),
        help: "With --apple-key: the registered bundle and Services ids, comma-separated.")
    var appleClientIDs: String = AppleRegistration.demoClientIDs.joined(separator: ",")

    @Option(help: "With --apple-key: where server-to-server notifications go.")
    var appleNotificationURL: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    mutating func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var configuration = EmulatorConfiguration()
        configuration.host = host ?? environment["LATCHKEY_EMULATOR_HOST"] ?? configuration.host
        if let port {
            configuration.port = port
        } else if let text = environment["LATCHKEY_EMULATOR_PORT"], !text.trimmingCharacters(in: .whitespaces).isEmpty {
            // Refused, not ignored: a typo must not leave the emulator on another port unnoticed.
            guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("LATCHKEY_EMULATOR_PORT must be a port number, not '\(text)'")
            }
            configuration.port = number
        }
        configuration.publicURL = publicURL ?? environment["LATCHKEY_EMULATOR_PUBLIC_URL"]
        configuration.issuer = issuer ?? environment["LATCHKEY_EMULATOR_ISSUER"] ?? configuration.issuer
        if let path = seed ?? environment["LATCHKEY_EMULATOR_SEED"] {
            configuration.seed = try EmulatorSeed.load(contentsOf: URL(fileURLWithPath: path))
        }
        if let path = appleKey ?? environment["LATCHKEY_EMULATOR_APPLE_KEY"] {
            configuration.apple = try appleRegistration(keyFile: path)
        }
        do {
            try configuration.validate()
        } catch {
            throw CommandError("\(error)")
        }
        var logger = Logger(label: "latchkey.emulator")
        logger.logLevel = logLevel
        let seed = configuration.seed
        let host = configuration.host
        let app = try await buildEmulator(configuration: configuration, logger: logger) { channel in
            let port = channel.localAddress?.port ?? 0
            // Written unbuffered: under a pipe, print() would hold the banner until exit.
            FileHandle.standardOutput.write(
                Data((EmulatorBanner.text(seed: seed, baseURL: "http://\(host):\(port)") + "\n").utf8))
        }
        do {
            try await app.runService()
        } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EACCES {
            // NIO's bind error names neither the port nor the setting that chose it.
            let reason =
                error.errnoCode == EADDRINUSE
                ? "is already in use (another emulator, or `latchkey serve --dev`?)"
                : "needs privileges this user lacks"
            throw CommandError(
                "the Facebook emulator cannot listen on \(host):\(configuration.port): the port \(reason); "
                    + "choose another with --port or LATCHKEY_EMULATOR_PORT")
        }
    }

    /// Apple's registration of the team whose key is in `keyFile`.
    private func appleRegistration(keyFile path: String) throws -> AppleRegistration {
        let pem: String
        do {
            pem = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ValidationError("cannot read --apple-key '\(path)': \(error.localizedDescription)")
        }
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
            throw ValidationError("--apple-key '\(path)' is not a P-256 private key in PEM (Apple's .p8)")
        }
        return AppleRegistration(
            teamID: appleTeamID, keyID: appleKeyID, publicKey: key.publicKey,
            clientIDs: appleClientIDs.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) },
            notificationURL: appleNotificationURL)
    }
}
