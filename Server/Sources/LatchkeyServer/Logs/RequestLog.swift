import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyCrypto
import Logging

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

    /// A new id: 96 random bits, 16 URL-safe characters.
    static func newID() -> String { RandomToken.base64URL(bytes: 12) }
}
