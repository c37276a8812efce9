import Foundation

/// Facts about where the tests run.
enum TestEnvironment {
    /// `CI=true`: a test whose tool is missing runs anyway and fails, instead of being skipped, so
    /// a machine without Chromium or the Python venv cannot pass CI by silently testing less.
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
}
