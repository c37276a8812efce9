import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyCrypto
import Logging
import Synchronization

/// The request a log line belongs to: an id for each request, sent back as `X-Request-Id` and
/// added to every line logged while the request is served, whichever logger logs it (through a
/// metadata provider reading a task-local, so no code has to pass the id along).
package enum RequestLog {
    /// The id of the request the running task serves, if any.
    @TaskLocal package static var requestID: String?

    /// The metadata every log handler adds: `latchkey.request.id` while a request is served.
    package static let metadataProvider = Logger.MetadataProvider {
        guard let id = requestID else { return [:] }
        return ["latchkey.request.id": .string(id)]
    }

    /// The response header carrying the id.
    package static let header = HTTPField.Name("X-Request-Id")!

    /// This process's part of every id: 48 random bits, so ids of several nodes (or of a node
    /// restarted) never meet.
    private static let prefix = RandomToken.base64URL(bytes: 6)
    private static let counter = Atomic<UInt64>(0)

    /// A new id, 16 URL-safe characters: the process's prefix and a counter in base 36. An id
    /// names a request, it proves nothing, so it need not be unpredictable; a counter spares every
    /// request a call to the system's random generator.
    static func newID() -> String {
        let number = counter.add(1, ordering: .relaxed).newValue % 2_821_109_907_456  // 36^8
        let digits = String(number, radix: 36)
        return prefix + String(repeating: "0", count: 8 - digits.count) + digits
    }
}
