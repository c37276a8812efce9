import ArgumentParser
import AsyncHTTPClient
import FacebookEmulator
import Foundation
import Hummingbird
import LatchkeySQLite
import LatchkeyServer
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

/// `latchkey serve`: the server with its embedded SQLite database; `--dev` adds the emulator.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Latchkey server.",
        discussion: """
            Settings come from flags, then the environment (LATCHKEY_…), then --config FILE (LATCHKEY_NAME=value \
            lines). Any setting may be read from a file instead, as NAME_FILE (for secrets). See the README for \
            every setting.
            """
    )

    @Flag(help: "Also run the Facebook emulator and point the server at it (offline development).")
    var dev = false

    @Option(help: "A file of LATCHKEY_NAME=value lines.")
    var config: String?

    @Option(help: "Address to bind (LATCHKEY_HOST).")
    var host: String?

    @Option(help: "Port to bind (LATCHKEY_PORT).")
    var port: Int?

    @Option(help: "SQLite path or URL (LATCHKEY_DATABASE_URL).")
    var databaseURL: String?

    @Option(help: "With --dev: the emulator's port.")
    var emulatorPort: Int = 8090

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    mutating func run() async throws {
        var settings = try Settings.load(configFile: config)
        Settings.set("LATCHKEY_HOST", to: host, in: &settings)
        Settings.set("LATCHKEY_PORT", to: port.map(String.init), in: &settings)
        Settings.set("LATCHKEY_DATABASE_URL", to: databaseURL, in: &settings)
        if dev { DevMode.apply(to: &settings, emulatorPort: emulatorPort) }
        Settings.defaultingDatabase(&settings)

        let configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration(settings: settings)
            try configuration.validate()
        } catch {
            // A setting's mistake, not the command line's: no usage text after it.
            throw CommandError("\(error)")
        }
        // Once, before the first logger: every line, whichever logger writes it, names the request
        // it belongs to.
        let format = configuration.operations.logFormat
        LoggingSystem.bootstrap(
            { label, provider in
                switch format {
                case .text: StreamLogHandler.standardError(label: label, metadataProvider: provider)
                case .json: JSONLogHandler(label: label, metadataProvider: provider)
                }
            }, metadataProvider: RequestLog.metadataProvider)
        var logger = Logger(label: "latchkey")
        logger.logLevel = logLevel
        // Migrated by buildApplication, before the server binds.
        // Closed by its service in the group, and again (a no-op) by `withStore` on the way out.
        do {
            try await StoreOpening.withStore(configuration, logger: logger, migrate: false, serving: true) { opened in
                try await run(configuration: configuration, opened: opened, logger: logger)
            }
        } catch {
            let failure = (error as? SQLiteServerLockError).map { CommandError($0.description) } ?? error
            guard format == .json else { throw failure }
            // ArgumentParser would print `Error: …` as text: in JSON the failure is an event, and
            // the exit status says the rest.
            logger.critical("latchkey.server.failed", metadata: ["latchkey.error": "\(failure)"])
            throw ExitCode.failure
        }
    }

    /// One pooled Facebook client for the server's lifetime. The client and the database are
    /// services of the group, listed first: the group shuts down in reverse order, so the server
    /// (and the emulator) drain their requests before what they use goes away.
    private func run(configuration: ServerConfiguration, opened: StoreOpening.Opened, logger: Logger) async throws {
        let dev = self.dev
        let emulatorPort = self.emulatorPort
        // Where the data is, resolved: a relative path is taken in the working directory, which a
        // service manager chooses.
        let database = "Database: " + ((try? DatabaseLocation(configuration.database.url))?.resolvedDisplayName ?? "?")
        let admin = configuration.operations.adminAddress
        let expected: Set<StartupBanner.Part> = Set(
            [.server] + (dev ? [.emulator] : []) + (admin == nil ? [] : [.admin]))
        let json = configuration.operations.logFormat == .json
        let banner = StartupBanner(
            expected: expected,
            emit: { text, ports in
                guard json else { return FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
                logger.notice(
                    "latchkey.server.listening",
                    metadata: [
                        "latchkey.banner": .string(text),
                        "latchkey.server.port": .stringConvertible(ports[.server] ?? configuration.http.port),
                    ])
            }
        ) { ports in
            let port = ports[.server] ?? configuration.http.port
            let text =
                dev
                ? DevMode.banner(
                    serverURL: "http://\(configuration.http.host):\(port)", emulatorPort: emulatorPort,
                    database: database)
                : "Latchkey listening on http://\(configuration.http.host):\(port)\n\(database)"
            guard let admin else { return text }
            let host = admin.host.contains(":") ? "[\(admin.host)]" : admin.host
            return text
                + "\nAdmin API on http://\(host):\(ports[.admin] ?? admin.port)/admin/v1 (LATCHKEY_ADMIN_LISTEN)"
        }
        let facebook = HTTPClient.facebook(configuration)
        let servers: [any Service]
        do {
            servers = try await buildServers(
                configuration: configuration, store: opened.store, facebook: facebook, banner: banner, logger: logger)
        } catch {
            // The group never ran, so its service does not close the client.
            try? await facebook.shutdown()
            throw error
        }
        let services: [any Service] =
            [
                ClosingService(description: "database", close: { await opened.close() }),
                ClosingService(description: "Facebook HTTP client", close: { try? await facebook.shutdown() }),
            ] + servers
        // A part that fails (a port in use) shuts the group down in order, as a signal does,
        // rather than cancelling every part at once. Cancelled together, Hummingbird logged its
        // cancellation errors before ours, and a connection a listener accepted after its
        // connection loop was cancelled (in `--dev`, Apple's check calling the emulator) trapped
        // in NIO ("Deinited NIOAsyncWriter without calling finish()"): the SIGILL of a start on
        // a port in use (PortInUseTests, connections during a failed start).
        let group = ServiceGroup(
            configuration: .init(
                services: services.map {
                    .init(service: $0, failureTerminationBehavior: .gracefullyShutdownGroup)
                }, logger: logger))
        let signals = ShutdownSignals()
        let trapped = await ShutdownSignals.trap()
        do {
            try await withThrowingDiscardingTaskGroup { tasks in
                tasks.addTask { await signals.watch(trapped, group) }
                try await group.run()
                tasks.cancelAll()
            }
            signals.logStopped(logger)
        } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EACCES {
            // NIO's bind error names neither the port nor which part of `serve` wanted it.
            let part = banner.notListening ?? .server
            let (port, setting) =
                switch part {
                case .server: ("\(configuration.http.host):\(configuration.http.port)", "--port or LATCHKEY_PORT")
                case .admin: (configuration.operations.adminListen ?? "", "LATCHKEY_ADMIN_LISTEN")
                case .emulator: ("127.0.0.1:\(emulatorPort)", "--emulator-port")
                }
            let reason =
                error.errnoCode == EADDRINUSE
                ? "is already in use (another Latchkey, or another program?)" : "needs privileges this user lacks"
            throw CommandError(
                "\(part.rawValue) cannot listen on \(port): the port \(reason); choose another with \(setting)")
        }
    }

    /// The server, and in `--dev` the emulator beside it.
    private func buildServers(
        configuration: ServerConfiguration, store: any LatchkeyStore, facebook: HTTPClient, banner: StartupBanner,
        logger: Logger
    ) async throws -> [any Service] {
        var servers: [any Service] = [
            try await buildApplication(
                configuration: configuration, store: store, httpClient: facebook, logger: logger,
                onServerRunning: { channel in
                    banner.listening(.server, port: channel.localAddress?.port ?? configuration.http.port)
                },
                onAdminServerRunning: { channel in banner.listening(.admin, port: channel.localAddress?.port) })
        ]
        if dev {
            var emulatorLogger = logger
            emulatorLogger.logLevel = .warning
            servers.append(
                try await buildEmulator(
                    configuration: EmulatorConfiguration(
                        host: "127.0.0.1", port: emulatorPort,
                        seed: DevMode.seed(configuration),
                        apple: DevMode.appleRegistration(configuration, emulatorPort: emulatorPort)),
                    logger: emulatorLogger
                ) { _ in banner.listening(.emulator) })
        }
        return servers
    }

}
