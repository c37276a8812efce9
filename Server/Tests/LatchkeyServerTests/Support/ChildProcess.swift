import Foundation

/// Runs a program to its exit and returns its status and output (stdout and stderr together),
/// launching under `TestLock.fileDescriptors` and reading off the cooperative pool.
enum ChildProcess {
    /// - Parameters:
    ///   - input: written to the program's standard input, which is then closed (none: the
    ///     standard input is empty).
    ///   - directory: its working directory (none: the test's).
    static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, input: Data? = nil,
        directory: URL? = nil
    ) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        let inputPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try await TestLock.fileDescriptors.withLock { try process.run() }
        if let input {
            try inputPipe.fileHandleForWriting.write(contentsOf: input)
            try inputPipe.fileHandleForWriting.close()
        }
        return await withCheckedContinuation { continuation in
            // A serial Dispatch queue: its thread blocks signals, so a child's SIGCHLD never
            // interrupts the read (Foundation traps on EINTR); see RawConnection.offPool.
            DispatchQueue(label: "latchkey.test.child-output").async {
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
