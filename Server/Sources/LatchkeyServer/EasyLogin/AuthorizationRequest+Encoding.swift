import Foundation

/// The bytes `SealedRequest` seals: compact, because they ride in a URL (JSON would escape a
/// client state of control characters to six times its size), and read strictly: bytes left over
/// or a malformed field make no request (only a server writes them, so this is defence in depth).
///
/// Layout: the expiry (IEEE 754 seconds since 1970, big-endian: exact, as the clock gave it), then
/// the client id, redirect URI, client state (after a presence byte), code challenge, fields
/// mapping (after a presence byte: an entry count, then field and property by field), Facebook app
/// id and Facebook verifier, and only for a link, a presence byte 1 and the link request (a request
/// without one keeps the earlier layout byte for byte, so nodes of the earlier release still read
/// it). Strings and counts are UTF-8 behind a LEB128 length.
extension AuthorizationRequest {
    /// The request's bytes.
    var encoded: Data {
        var writer = Writer()
        writer.bytes.append(
            contentsOf: withUnsafeBytes(of: expiresAt.timeIntervalSince1970.bitPattern.bigEndian, Array.init))
        writer.string(clientID)
        writer.string(redirectURI)
        writer.optional(clientState) { $0.string($1) }
        writer.string(codeChallenge)
        writer.optional(fieldsMapping) { writer, mapping in
            writer.length(mapping.count)
            for (field, property) in mapping.sorted(by: { $0.key < $1.key }) {
                writer.string(field)
                writer.string(property)
            }
        }
        writer.string(facebookAppID)
        writer.string(facebookCodeVerifier)
        if let linkRequest { writer.optional(linkRequest) { $0.string($1) } }
        return Data(writer.bytes)
    }

    /// Reads `encoded`; `nil` unless the bytes are exactly one request.
    init?(encoded data: Data) {
        var reader = Reader(bytes: Array(data))
        guard let bits = reader.take(8)?.reduce(UInt64(0), { $0 << 8 | UInt64($1) }),
            case let seconds = Double(bitPattern: bits), seconds.isFinite,
            let clientID = reader.string(), let redirectURI = reader.string(),
            let clientState = reader.optional({ $0.string() }), let codeChallenge = reader.string(),
            let fieldsMapping = reader.optional({ reader -> [String: String]? in
                guard let count = reader.length() else { return nil }
                var mapping: [String: String] = [:]
                for _ in 0..<count {
                    guard let field = reader.string(), let property = reader.string(), mapping[field] == nil else {
                        return nil
                    }
                    mapping[field] = property
                }
                return mapping
            }),
            let facebookAppID = reader.string(), let facebookCodeVerifier = reader.string(),
            let linkRequest = reader.isAtEnd ? .some(nil) : reader.present({ $0.string() }),
            reader.isAtEnd
        else { return nil }
        self.init(
            clientID: clientID, redirectURI: redirectURI, clientState: clientState, codeChallenge: codeChallenge,
            fieldsMapping: fieldsMapping, facebookAppID: facebookAppID, facebookCodeVerifier: facebookCodeVerifier,
            expiresAt: Date(timeIntervalSince1970: seconds), linkRequest: linkRequest)
    }
}

private struct Writer {
    var bytes: [UInt8] = []

    mutating func length(_ value: Int) {
        var rest = UInt(value)
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func string(_ text: String) {
        length(text.utf8.count)
        bytes.append(contentsOf: text.utf8)
    }

    mutating func optional<Value>(_ value: Value?, _ write: (inout Writer, Value) -> Void) {
        guard let value else { return bytes.append(0) }
        bytes.append(1)
        write(&self, value)
    }
}

private struct Reader {
    let bytes: [UInt8]
    var offset = 0

    var isAtEnd: Bool { offset == bytes.count }

    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// A LEB128 length of at most three bytes (2 MiB), in its shortest form only.
    mutating func length() -> Int? {
        var value = 0
        for index in 0..<3 {
            guard let byte = take(1)?.first else { return nil }
            value |= Int(byte & 0x7F) << (7 * index)
            if byte & 0x80 == 0 { return index > 0 && byte == 0 ? nil : value }
        }
        return nil
    }

    mutating func string() -> String? {
        guard let count = length(), let slice = take(count) else { return nil }
        return String(validating: slice, as: UTF8.self)
    }

    /// A value written only when present (its byte 1 first): `nil` for anything else.
    mutating func present<Value>(_ read: (inout Reader) -> Value?) -> Value?? {
        guard take(1)?.first == 1, let value = read(&self) else { return nil }
        return .some(value)
    }

    /// `.some(nil)` when absent, `nil` when malformed.
    mutating func optional<Value>(_ read: (inout Reader) -> Value?) -> Value?? {
        switch take(1)?.first {
        case 0: return .some(nil)
        case 1: return read(&self).map { .some($0) }
        default: return nil
        }
    }
}
