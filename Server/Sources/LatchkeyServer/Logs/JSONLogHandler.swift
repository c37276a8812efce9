import Foundation
import LatchkeyAPI
import Logging
import Synchronization

/// `LATCHKEY_LOG_FORMAT=json`: one JSON object per line, for log collectors. The event's name is
/// `message`; each metadata key (`latchkey.setting`, `latchkey.request.id`…) is a member of its
/// own, dotted as it is written, so a collector indexes them without parsing text.
package struct JSONLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .info
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let sink: LineSink

    /// Where lines go: each written whole, by one `write`, so lines from concurrent tasks never
    /// interleave.
    package final class LineSink: Sendable {
        private let write: @Sendable (String) -> Void
        private let lock = Mutex(())

        /// A sink calling `write` with each line (its newline included), one at a time.
        package init(_ write: @escaping @Sendable (String) -> Void) { self.write = write }

        /// Standard error, where `serve` logs.
        package static let standardError = LineSink { line in
            FileHandle.standardError.write(Data(line.utf8))
        }

        func emit(_ line: String) { lock.withLock { _ in write(line) } }
    }

    /// A handler for `label` writing to `sink`, adding what `metadataProvider` gives (the request id).
    package init(label: String, sink: LineSink = .standardError, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.sink = sink
        self.metadataProvider = metadataProvider
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var members: [String: JSONValue] = [:]
        for (key, value) in metadata { members[key] = Self.json(value) }
        for (key, value) in metadataProvider?.get() ?? [:] { members[key] = Self.json(value) }
        for (key, value) in event.metadata ?? [:] { members[key] = Self.json(value) }
        members["time"] = .string(Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        members["level"] = .string(event.level.rawValue)
        members["logger"] = .string(label)
        members["message"] = .string(event.message.description)
        sink.emit(String(decoding: JSONValue.object(members).encoded(), as: UTF8.self) + "\n")
    }

    /// A metadata value as JSON: counts, durations and flags logged as values
    /// (`.stringConvertible(42)`) are numbers and booleans, so a collector compares them as such.
    static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let value as any BinaryInteger): .int(Int(truncatingIfNeeded: value))
        case .stringConvertible(let value as Double): value.isFinite ? .double(value) : .string(value.description)
        case .stringConvertible(let value as Bool): .bool(value)
        case .stringConvertible(let value): .string(value.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let members): .object(members.mapValues(json))
        }
    }
}
