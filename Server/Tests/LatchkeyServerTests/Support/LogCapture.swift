import Foundation
import LatchkeyServer
import Logging
import Synchronization
import Testing

/// Every log record a server wrote during a test, at trace level, rendered as one line each
/// (level, message, metadata, source): what an operator's log pipeline would receive.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    /// A logger that records into this capture and prints nothing.
    func logger(label: String) -> Logger {
        // With the server's metadata provider, as `serve` bootstraps it: lines carry the request id.
        var logger = Logger(label: label) { _ in
            CapturingLogHandler(capture: self, metadataProvider: RequestLog.metadataProvider)
        }
        logger.logLevel = .trace
        return logger
    }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var all: [String] { lines.withLock { $0 } }

    /// Records an issue for every log line holding `configuration`'s app secrets or app tokens,
    /// the key-encryption key's text `kek`, or anything shaped like a credential.
    func expectNoSecrets(
        kek: String?, _ configuration: ServerConfiguration, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let databasePassword: String? =
            if case .postgres(let url) = try? DatabaseLocation(configuration.database.url) { url.password } else { nil }
        let secrets =
            [kek, databasePassword].compactMap { $0 }
            + configuration.facebook.apps.flatMap { [$0.secret, "\($0.id)|\($0.secret)"] }
        let leaks = SecretScan.findings(in: all, secrets: secrets)
        #expect(
            leaks.isEmpty, "secrets in the server log:\n\(leaks.joined(separator: "\n"))",
            sourceLocation: sourceLocation)
    }
}

/// Records instead of printing.
struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = self.metadata.merging(metadataProvider?.get() ?? [:]) { _, new in new }
            .merging(event.metadata ?? [:]) { _, new in new }
        let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let error = event.error.map { " error=\($0)" } ?? ""
        capture.append("\(event.level) [\(event.source)] \(event.message) \(rendered)\(error)")
    }
}

/// Looks for credentials in log lines: the exact secrets a test handled, and anything shaped like
/// a token, a code or a proof, so a leak of a value the test never saw is caught too.
enum SecretScan {
    /// Shapes no log line may contain: a JWT; a Facebook-style token or code (`EAA…`, `AQ…`); a
    /// literal app token (`APPID|…`); a 64-digit hex HMAC (`appsecret_proof`); and any run of 32 or
    /// more base64url characters (refresh tokens, Easy Login codes, handles and verifiers are 43+;
    /// the ids Latchkey logs, users, sessions and key ids, are 20–22).
    static let patterns: [(name: String, regex: NSRegularExpression)] = [
        ("jwt", #"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\."#),
        ("facebook token", #"\bEAA[A-Za-z0-9]{20,}"#),
        ("facebook code", #"\bAQ[A-Za-z0-9]{40,}"#),
        ("app token", #"\b[0-9]{6,}\|[^\s"]+"#),
        ("proof", #"\b[0-9a-f]{64}\b"#),
        ("random token", #"[A-Za-z0-9_-]{32,}"#),
    ].compactMap { name, pattern in (try? NSRegularExpression(pattern: pattern)).map { (name, $0) } }

    /// Every setting's name, longest first, so that no name is replaced inside a longer one.
    static let settingNames = ServerConfiguration.settingNames.sorted { $0.count > $1.count }

    /// The offending lines, each with what was found.
    static func findings(in lines: [String], secrets: [String]) -> [String] {
        var found: [String] = []
        for logged in lines {
            // Hummingbird's request id is 32 random hex digits: an id, not a credential.
            var line = logged.replacingOccurrences(
                of: #"hb\.request\.id=[0-9a-f]+"#, with: "hb.request.id=…", options: .regularExpression)
            // Setting names are public constants, some 32 characters long or more.
            for name in settingNames where line.contains(name) {
                line = line.replacingOccurrences(of: name, with: "LATCHKEY_…")
            }
            for secret in secrets where secret.count >= 8 && line.contains(secret) {
                found.append("secret in: \(line)")
            }
            let range = NSRange(line.startIndex..., in: line)
            for (name, regex) in patterns where regex.firstMatch(in: line, range: range) != nil {
                found.append("\(name) in: \(line)")
            }
        }
        return found
    }
}
