import Foundation

/// The repository, for the files tests read beside the server's sources (README.md, docs/,
/// scripts/, Tests/Interop, the SDK's Sources/): this file is
/// Server/Tests/LatchkeyServerTests/Support/Repository.swift.
enum Repository {
    /// The repository's root directory.
    static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<5 { url = url.deletingLastPathComponent() }
        return url
    }()
}
