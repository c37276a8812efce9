import Foundation

/// Runs a program to its exit and returns its status and output (stdout and stderr together),
/// launching under `TestLock.fileDescriptors` and reading off the cooperative pool.
enum ChildProcess {
    static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try await TestLock.fileDescriptors.withLock { try process.run() }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
            }
        }
    }
}

/// The `latchkey` executable `swift test` built next to the test bundle.
enum LatchkeyBinary {
    static let url: URL? = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL,
        ].map { $0.appendingPathComponent("latchkey") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()
}
