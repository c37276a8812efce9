import Foundation
import Synchronization

/// What `serve` prints once everything it runs is listening, and which part did not get its port.
///
/// With `--dev` the server and the emulator bind separately; printing "listening" when the first
/// of them is up told people a server was ready whose emulator then failed to bind.
final class StartupBanner: Sendable {
    /// A part of `serve` that binds a port.
    enum Part: String, Sendable, CaseIterable {
        case server = "the Latchkey server"
        case admin = "the admin API"
        case emulator = "the Facebook emulator"
    }

    private let expected: Set<Part>
    private let state = Mutex<(listening: Set<Part>, ports: [Part: Int])>(([], [:]))
    private let text: @Sendable (_ ports: [Part: Int]) -> String
    private let emit: @Sendable (_ text: String, _ ports: [Part: Int]) -> Void

    /// - Parameters:
    ///   - emit: shows the banner (standard output by default; a log event when the log is JSON,
    ///     where every line must be one object).
    ///   - text: the banner, given the port each part bound (port 0 picks one).
    init(
        expected: Set<Part>,
        emit: @escaping @Sendable (_ text: String, _ ports: [Part: Int]) -> Void = { text, _ in
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
        },
        text: @escaping @Sendable (_ ports: [Part: Int]) -> String
    ) {
        self.expected = expected
        self.emit = emit
        self.text = text
    }

    /// Records that `part` listens on `port`; prints the banner when the last expected part does.
    func listening(_ part: Part, port: Int? = nil) {
        let ready: [Part: Int]? = state.withLock { state in
            state.listening.insert(part)
            if let port { state.ports[part] = port }
            return state.listening == expected ? state.ports : nil
        }
        if let ready { emit(text(ready), ready) }
    }

    /// The first expected part, in start order, that never started listening.
    var notListening: Part? {
        let listening = state.withLock { $0.listening }
        return Part.allCases.first { expected.contains($0) && !listening.contains($0) }
    }
}
