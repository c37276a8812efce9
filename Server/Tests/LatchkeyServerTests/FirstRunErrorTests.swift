import Foundation
import LatchkeyServer
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
