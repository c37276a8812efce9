import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What an operator reads when a command cannot start: the setting or the port named, and no
/// usage text after a mistake that was not the command line's.
@Suite("Command errors")
struct CommandErrorTests {
    @Test("a setting's mistake names it and prints no usage; an unknown LATCHKEY_ variable too")
    func settingsWithoutUsage() async throws {
        for settings in [["LATCHKEY_PORT": "eighty"], ["LATCHKEY_PORTT": "8080"], ["LATCHKEY_ADMIN_LISTEN": "9090"]] {
            var environment = OperatorMistakeTests.environment(settings)
            environment["LATCHKEY_FACEBOOK_APP_ID"] = "1"
            environment["LATCHKEY_FACEBOOK_APP_SECRET"] = "s"
            let serve = try await OperatorMistakeTests.latchkey(["serve"], environment)
            #expect(serve.status != 0, "\(settings)")
            #expect(serve.output.contains(settings.keys.first ?? "") || serve.output.contains("LATCHKEY_PORT"))
            #expect(!serve.output.contains("USAGE") && !serve.output.contains("Usage:"), "\(serve.output)")
        }
    }

    @Test("the emulator on a port in use says which port and which setting moves it")
    func emulatorPortInUse() async throws {
        let held = try HeldPort.hold()
        defer { close(held.descriptor) }
        let emulator = try await OperatorMistakeTests.latchkey(
            ["emulator", "--port", "\(held.port)"], OperatorMistakeTests.environment([:]))
        #expect(emulator.status != 0)
        #expect(emulator.output.contains("cannot listen on 127.0.0.1:\(held.port)"), "\(emulator.output)")
        #expect(emulator.output.contains("--port or LATCHKEY_EMULATOR_PORT"))
        #expect(!emulator.output.contains("IOError"), "not NIO's raw error")
    }
}
