import Foundation
import LatchkeyServer
import Synchronization
import Testing

@testable import LatchkeySQLite

#if canImport(Glibc)
import Glibc
#endif

/// Setup mistakes a newcomer makes get errors that name what to fix.
@Suite("First-run errors name what to fix")
struct FirstRunErrorTests {
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-first-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("a file that is not a database is named, with SQLite's reason")
    func notADatabase() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("notes.sqlite")
        try Data("these are my notes, not a database".utf8).write(to: file)
        await #expect {
            _ = try await SQLiteStore.open(.sqliteFile(file.path))
        } throws: {
            "\($0)" == "cannot open the database \(file.path): file is not a database (SQLite error 26)"
        }
    }

    @Test("a directory given as the database is named, with the setting to change")
    func directoryAsDatabase() async throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        await #expect {
            _ = try await SQLiteStore.open(.sqliteFile(directory.path))
        } throws: {
            "\($0)".hasPrefix("cannot use \(directory.path) for the database: Is a directory")
                && "\($0)".contains("LATCHKEY_DATABASE_URL")
        }
    }
}

/// `latchkey serve` on a port another program holds.
@Suite(
    "Port in use", .enabled(if: LatchkeyBinary.url != nil || TestEnvironment.isCI, "the latchkey binary is not built"))
struct PortInUseTests {
    /// Runs `latchkey serve` with `arguments` to its exit; stdout and stderr together.
    static func serve(_ arguments: [String]) async throws -> String {
        try await ChildProcess.run(
            try #require(LatchkeyBinary.url), ["serve"] + arguments,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") }
        ).output
    }

    @Test("the server's or the emulator's port in use is named, with the flag to change, and no banner")
    func named() async throws {
        let held = try HeldPort.hold()
        defer { close(held.descriptor) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-port-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await Self.serve([
            "--dev", "--port", String(held.port), "--emulator-port", "0",
            "--database-url", directory.appendingPathComponent("a.sqlite").path,
        ])
        #expect(
            server.contains("the Latchkey server cannot listen on 127.0.0.1:\(held.port): the port is already in use"))
        #expect(server.contains("--port or LATCHKEY_PORT") && !server.contains("Latchkey (dev) listening"))
        let emulator = try await Self.serve([
            "--dev", "--port", "0", "--emulator-port", String(held.port),
            "--database-url", directory.appendingPathComponent("b.sqlite").path,
        ])
        #expect(emulator.contains("the Facebook emulator cannot listen on 127.0.0.1:\(held.port)"))
        #expect(emulator.contains("--emulator-port") && !emulator.contains("Latchkey (dev) listening"))
        // Nothing that started is reported as failing for being stopped (Apple's first check,
        // cancelled while it waited for the server to bind, said "cancelled" twice).
        for output in [server, emulator] {
            #expect(!output.lowercased().contains("cancel"), "\(output)")
        }
    }

    /// Nine starts at once (about 2 s): a failed part used to cancel every other at once, which
    /// printed Hummingbird's cancellation errors before the message, closed the database and the
    /// HTTP client under parts still starting, and once in about nine tries ended in SIGILL.
    @Test("a port in use ends every start with exit status 1 and the message, without cancellation noise")
    func noCancellationNoise() async throws {
        let held = try HeldPort.hold()
        defer { close(held.descriptor) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-port-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let runs = try await withThrowingTaskGroup(of: (status: Int32, output: String).self) { group in
            for index in 0..<9 {
                group.addTask {
                    try await ChildProcess.run(
                        try #require(LatchkeyBinary.url),
                        [
                            "serve", "--dev", "--port", String(held.port), "--emulator-port", "0",
                            "--database-url", directory.appendingPathComponent("\(index).sqlite").path,
                        ], environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") })
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for run in runs {
            #expect(run.status == 1, "\(run.output)")
            #expect(run.output.contains("Error: the Latchkey server cannot listen on 127.0.0.1:\(held.port)"))
            #expect(!run.output.contains("CancellationError") && !run.output.contains("Server shutdown error"))
        }
    }
}

/// The SIGILL of `serve --dev` on a port in use, made likely: clients connecting to the emulator
/// while the start fails. The old stop cancelled every part at once, and a connection the
/// emulator's listener accepted after its connection loop was cancelled left a `NIOAsyncWriter`
/// unfinished (NIO's `preconditionFailure` "Deinited NIOAsyncWriter without calling finish()",
/// from `NIOAsyncChannelHandler.channelActive`, a trap in debug and release builds). In `--dev`
/// Apple's credential check is such a client. Measured on the old binary: 17 traps in 20 starts
/// with four threads connecting; 3 in 90 plain starts under load.
extension PortInUseTests {
    /// A port free a moment ago.
    static func freePort() throws -> Int {
        let (descriptor, port) = try HeldPort.refusing()
        close(descriptor)
        return port
    }

    /// Connects to 127.0.0.1:`port` and hangs up, over and over, until `stop` is set. Each hangs
    /// up with a reset (`SO_LINGER` 0): a closed connection would leave its port in TIME_WAIT for
    /// a minute, and tens of thousands of them exhausted the ephemeral ports every other test
    /// (PostgreSQL's clients among them) connects from, in a full run.
    final class Hammer: Sendable {
        let stop = Atomic(false)
        let done = DispatchGroup()

        init(port: Int, threads: Int) {
            for _ in 0..<threads {
                done.enter()
                Thread { [self] in
                    var address = sockaddr_in()
                    address.sin_family = sa_family_t(AF_INET)
                    address.sin_addr.s_addr = inet_addr("127.0.0.1")
                    address.sin_port = in_port_t(UInt16(port).bigEndian)
                    var reset = linger(l_onoff: 1, l_linger: 0)
                    while !stop.load(ordering: .relaxed) {
                        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                        setsockopt(socket, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
                        let result = withUnsafePointer(to: &address) {
                            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                            }
                        }
                        // Refused (nothing listens yet): a millisecond's pause, so two threads
                        // do not take the cores a starting server needs.
                        if result != 0 { usleep(1000) }
                        close(socket)
                    }
                    done.leave()
                }.start()
            }
        }

        /// Stops the threads and waits for them.
        func finish() async {
            stop.store(true, ordering: .relaxed)
            await withCheckedContinuation { continuation in done.notify(queue: .global()) { continuation.resume() } }
        }
    }

    @Test("a failed start while clients connect to the emulator exits 1, never with a trap")
    func connectionsDuringAFailedStart() async throws {
        let held = try HeldPort.hold()
        defer { close(held.descriptor) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-port-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        for round in 0..<3 {
            let emulatorPort = try Self.freePort()
            let hammer = Hammer(port: emulatorPort, threads: 2)
            let run = try await ChildProcess.run(
                try #require(LatchkeyBinary.url),
                [
                    "serve", "--dev", "--port", String(held.port), "--emulator-port", String(emulatorPort),
                    "--database-url", directory.appendingPathComponent("\(round).sqlite").path,
                ], environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") })
            await hammer.finish()
            #expect(run.status == 1, "round \(round): \(run.output.suffix(3000))")
            #expect(!run.output.contains("Fatal error"), "round \(round)")
        }
    }
}

/// `LATCHKEY_LOG_FORMAT=json`: everything `serve` writes once it has read its settings.
@Suite(
    "serve's JSON log",
    .enabled(if: LatchkeyBinary.url != nil || TestEnvironment.isCI, "the latchkey binary is not built"),
    .timeLimit(.minutes(2)))
struct ServeJSONLogTests {
    /// Every line of `text` as a JSON object (an `Issue` for any other line).
    static func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(whereSeparator: \.isNewline).map { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return try #require(object, "not a JSON object: \(line)")
        }
    }

    /// The settings of a production-like start that needs nothing else (Facebook is never asked).
    static func environment(port: Int, directory: URL) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LATCHKEY_") }.merging([
            "LATCHKEY_LOG_FORMAT": "json", "LATCHKEY_HOST": "127.0.0.1", "LATCHKEY_PORT": String(port),
            "LATCHKEY_DATABASE_URL": directory.appendingPathComponent("latchkey.sqlite").path,
            "LATCHKEY_KEY_ENCRYPTION_KEY": KeyEncryptionKey.generate().encoded,
            "LATCHKEY_FACEBOOK_APP_ID": Demo.appID, "LATCHKEY_FACEBOOK_APP_SECRET": Demo.secret,
            "LATCHKEY_FACEBOOK_STARTUP_CHECK": "off", "LATCHKEY_FACEBOOK_GRAPH_URL": "http://127.0.0.1:9/v21.0",
        ]) { _, new in new }
    }

    @Test("a failed start is one JSON event, not `Error: …` text, and the exit status is 1 (about 1 s)")
    func failedStart() async throws {
        let held = try HeldPort.hold()
        defer { close(held.descriptor) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-json-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (status, output) = try await ChildProcess.run(
            try #require(LatchkeyBinary.url), ["serve"],
            environment: Self.environment(port: held.port, directory: directory))
        #expect(status == 1)
        let failed = try Self.objects(output).filter { $0["message"] as? String == "latchkey.server.failed" }
        #expect(failed.count == 1, "\(output)")
        #expect(
            (failed.first?["latchkey.error"] as? String)?.contains("cannot listen on 127.0.0.1:\(held.port)") == true)
    }

    @Test("from the banner to SIGTERM every line is a JSON object; the shutdown is an event with numbers (about 2 s)")
    func bannerToShutdown() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-json-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = Process()
        process.executableURL = try #require(LatchkeyBinary.url)
        process.arguments = ["serve"]
        process.environment = Self.environment(port: 0, directory: directory)
        let (output, errors) = (Pipe(), Pipe())
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try await TestLock.fileDescriptors.withLock { try process.run() }
        // A bound on a hang, not a timing: a server that never logs its banner is killed, so the
        // reads below end and the test fails instead of waiting forever.
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) { if process.isRunning { kill(pid, SIGKILL) } }
        // Off the cooperative pool, on a serial queue whose thread blocks signals (ChildProcess).
        let (printed, logged) = await withCheckedContinuation { continuation in
            DispatchQueue(label: "latchkey.test.json-serve").async {
                var logged = Data()
                while !String(decoding: logged, as: UTF8.self).contains("latchkey.server.listening") {
                    let data = errors.fileHandleForReading.availableData
                    if data.isEmpty { break }
                    logged.append(data)
                }
                kill(process.processIdentifier, SIGTERM)
                logged.append(errors.fileHandleForReading.readDataToEndOfFile())
                let printed = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(
                    returning: (String(decoding: printed, as: UTF8.self), String(decoding: logged, as: UTF8.self)))
            }
        }
        #expect(process.terminationStatus == 0, "\(logged)")
        #expect(try Self.objects(printed).isEmpty, "standard output: \(printed)")
        let events = try Self.objects(logged)
        let listening = try #require(events.first { $0["message"] as? String == "latchkey.server.listening" })
        #expect((listening["latchkey.server.port"] as? Int ?? 0) > 0)
        #expect((listening["latchkey.banner"] as? String)?.contains("Latchkey listening on http://127.0.0.1:") == true)
        let stopped = try #require(events.last, "\(logged)")
        #expect(stopped["message"] as? String == "latchkey.server.stopped")
        #expect(stopped["latchkey.shutdown.signal"] as? String == "SIGTERM")
        #expect(stopped["latchkey.shutdown.signal_number"] as? Int == Int(SIGTERM))
        #expect(stopped["latchkey.shutdown.drain_ms"] is Int, "\(stopped)")
    }
}

@Suite(
    "The example app's command line",
    .enabled(if: LatchkeyBinary.url != nil || TestEnvironment.isCI, "the binaries are not built"))
struct ExampleCommandLineTests {
    @Test("--help prints the usage and its settings instead of signing in a person called --help")
    func help() async throws {
        let binary = try #require(LatchkeyBinary.url).deletingLastPathComponent().appendingPathComponent(
            "latchkey-example")
        let (status, text) = try await ChildProcess.run(binary, ["--help"])
        #expect(status == 0)
        #expect(text.hasPrefix("Usage: latchkey-example [USER]"))
        #expect(text.contains("LATCHKEY_URL") && text.contains("LATCHKEY_EMULATOR_URL"))
    }
}
