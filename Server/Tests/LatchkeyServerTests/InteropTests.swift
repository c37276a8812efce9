import Foundation
import Testing

/// Easy Login with a standard OAuth 2.0 client library (Python's Authlib) instead of our SDK:
/// what any RFC 6749 + RFC 7636 client does must just work. `scripts/test-setup` makes the
/// virtual environment at `.build-venv`.
@Suite(
    "Interop: a standard OAuth client",
    .enabled(if: Interop.python != nil || TestEnvironment.isCI, "\(Interop.missing)"))
struct InteropTests {
    @Test("Authlib signs in with PKCE, calls the API, refreshes, and sees a replayed code refused")
    func authlib() async throws {
        try await Stack.run(browsable: true) { stack in
            let output = try await Interop.run(
                script: "authlib_easy_login.py",
                environment: [
                    "LATCHKEY_SERVER": stack.serverURL.absoluteString, "LATCHKEY_CLIENT_ID": Demo.clientID,
                    "LATCHKEY_REDIRECT_URI": "http://127.0.0.1:47123/callback", "EMULATOR_USER": "alice",
                ])
            let seen = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
            #expect(seen["token_type"] as? String == "Bearer")
            #expect(seen["scope"] as? String == "email public_profile")
            #expect(seen["email"] as? String == "alice@example.com")
            #expect(seen["refreshed"] as? Bool == true)
            #expect(seen["replay_error"] as? String == "invalid_grant")
            #expect(seen["answer_has_iss"] as? Bool == true)
        }
    }
}

enum Interop {
    static let root = Repository.root

    /// The virtual environment's Python, when `scripts/test-setup` could make it.
    static let python: URL? = {
        let candidate = root.appendingPathComponent(".build-venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: candidate.path) else { return nil }
        return candidate
    }()

    static let missing = "no .build-venv with Authlib (scripts/test-setup installs it from PyPI)"

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs a script from `Tests/Interop` and returns its standard output; a non-zero exit fails.
    static func run(script: String, environment: [String: String]) async throws -> Data {
        let process = Process()
        let executable: URL = try #require(python, "\(missing)")
        process.executableURL = executable
        process.arguments = [root.appendingPathComponent("Tests/Interop/\(script)").path]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        // Both pipes are drained while the script runs, so a chatty script cannot fill one and
        // stall; each on a serial queue of its own: blocking reads would starve Swift's small task
        // pool, and Dispatch's global queue, whose threads on Linux are as few as the cores, too
        // (see RawConnection.offPool).
        func drain(_ pipe: Pipe) -> Task<Data, Never> {
            Task {
                await withCheckedContinuation { continuation in
                    DispatchQueue(label: "latchkey.test.interop-output").async {
                        continuation.resume(returning: pipe.fileHandleForReading.readDataToEndOfFile())
                    }
                }
            }
        }
        let stdoutData = drain(output)
        let stderrData = drain(errors)
        // The lock covers only the launch (what must not overlap the many-socket test), not the
        // run: holding it for the whole Python flow made every other process-launching test wait.
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = {
            exited.continuation.yield($0.terminationStatus)
            exited.continuation.finish()
        }
        try await TestLock.fileDescriptors.withLock { try process.run() }
        var status: Int32 = -1
        for await code in exited.stream { status = code }
        let stdout = await stdoutData.value
        guard status == 0 else {
            let stderr = String(decoding: await stderrData.value, as: UTF8.self)
            throw Failed(description: "\(script) exited \(status): \(stderr.suffix(2000))")
        }
        return stdout
    }
}
