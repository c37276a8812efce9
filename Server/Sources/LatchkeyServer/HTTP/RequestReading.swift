import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import LatchkeyShared
import NIOCore

/// Reads request bodies with the server's size limit and turns every shape problem into a typed
/// 400: malformed JSON, a non-object, unknown fields, wrong field types.
struct RequestReading: Sendable {
    let maximumBodySize: Int

    /// The body as a JSON object or a form (`application/x-www-form-urlencoded`), as string or
    /// structured values, refusing fields outside `allowed` (or, with `ignoringUnknown`, dropping
    /// them and empty values, as RFC 6749 §3.2 asks of the token endpoint).
    func fields(
        _ request: Request, allowed: Set<String>, ignoringUnknown: Bool = false
    ) async throws -> [String: JSONValue] {
        var request = request
        let buffer = try await request.collectBody(upTo: maximumBodySize)
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        var fields: [String: JSONValue]
        if contentType.hasPrefix("application/x-www-form-urlencoded") {
            // `curl -d '{…}'` sends JSON labelled as a form; read as a form it would come back as
            // one unknown field named after the whole body.
            let first = buffer.readableBytesView.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            guard first != UInt8(ascii: "{") && first != UInt8(ascii: "[") else {
                throw APIError(
                    .unsupportedMediaType, .malformedRequest,
                    "The body is JSON but its Content-Type says a form: send Content-Type: application/json.")
            }
            // A repeated parameter is refused (RFC 6749 §3.1), as a repeated JSON member is: which
            // copy wins must never be a question.
            let pairs = FormEncoding.pairs(String(buffer: buffer))
            fields = [:]
            for (name, value) in pairs {
                guard fields.updateValue(.string(value), forKey: name) == nil else {
                    throw APIError.invalidRequest("Parameter '\(name)' is repeated.")
                }
            }
        } else if buffer.readableBytesView.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
            fields = [:]
        } else {
            guard let json = try? JSONValue.parse(buffer.readableBytesView) else {
                throw APIError.malformed("The request body is not valid JSON.")
            }
            guard let object = json.objectValue else {
                throw APIError.malformed("The request body must be a JSON object.")
            }
            fields = object
        }
        if ignoringUnknown {
            return fields.filter { allowed.contains($0.key) && $0.value != .string("") && $0.value != .null }
        }
        let unknown = Set(fields.keys).subtracting(allowed)
        guard unknown.isEmpty else {
            throw APIError.invalidRequest("Unknown field(s): \(unknown.sorted().joined(separator: ", ")).")
        }
        return fields
    }

    /// A string field, `nil` when absent; other types are refused.
    static func string(_ fields: [String: JSONValue], _ name: String, maxLength: Int = 8192) throws -> String? {
        guard let value = fields[name], value != .null else { return nil }
        guard let string = value.stringValue else { throw APIError.invalidRequest("'\(name)' must be a string.") }
        guard string.utf8.count <= maxLength else { throw APIError.invalidRequest("'\(name)' is too long.") }
        return string
    }

    /// A `{string: string}` field.
    static func stringMap(_ fields: [String: JSONValue], _ name: String) throws -> [String: String]? {
        guard let value = fields[name], value != .null else { return nil }
        guard let object = value.objectValue else { throw APIError.invalidRequest("'\(name)' must be an object.") }
        var result: [String: String] = [:]
        for (key, entry) in object {
            guard let string = entry.stringValue else {
                throw APIError.invalidRequest("'\(name).\(key)' must be a string.")
            }
            result[key] = string
        }
        return result
    }
}

extension Response {
    /// A JSON response from an `Encodable` value, never cached (tokens and user data).
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data =
            switch value {
            case let body as any JSONRepresentable: body.json.encoded()
            case let body as JSONValue: body.encoded()
            default: try JSONEncoder.latchkey.encode(value)
            }
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[HTTPField.Name("Pragma")!] = "no-cache"  // RFC 6749 §5.1, for HTTP/1.0 caches
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension JSONEncoder {
    /// Sorted keys for stable output; slashes unescaped for readable URLs.
    static let latchkey: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
