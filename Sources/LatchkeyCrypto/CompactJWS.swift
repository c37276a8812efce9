import Foundation
import LatchkeyAPI
import LatchkeyShared

/// A compact JWS (RFC 7515 §7.1) split and decoded, before any check: verifiers inspect the header
/// and claims, then check the signature over `signingInput`.
///
/// One reader for every token kind (Facebook's id tokens on the server and in the SDK, Latchkey's
/// own access tokens), so a parsing rule — size, segment count, JSON objects only, no duplicate
/// member names — holds everywhere at once.
public struct CompactJWS: Sendable {
    /// The protected header, a JSON object.
    public let header: JSONValue
    /// The payload, a JSON object (a nested JWT or any other payload is refused).
    public let claims: JSONValue
    /// `BASE64URL(header) "." BASE64URL(payload)` exactly as received: what the signature covers.
    public let signingInput: Data
    /// The decoded signature segment.
    public let signature: Data

    /// The longest token read at all. Facebook's id tokens are 1–2 KB even with every profile
    /// claim; the cap keeps a stranger's megabyte "token" from being decoded and parsed.
    public static let maximumLength = 16 * 1024

    /// Splits and decodes a token; `nil` when it is not three base64url segments of JSON objects.
    ///
    /// Split on the UTF-8 bytes: `String.split` walks grapheme clusters, and was half the cost of
    /// reading an id token (docs/performance.md). The JSON reader refuses duplicate member names,
    /// so a header or claim cannot mean one thing here and another to a last-wins parser.
    public init?(_ token: String, maximumLength: Int = CompactJWS.maximumLength) {
        let bytes = Array(token.utf8)
        guard bytes.count <= maximumLength, let firstDot = bytes.firstIndex(of: UInt8(ascii: ".")),
            let secondDot = bytes[(firstDot + 1)...].firstIndex(of: UInt8(ascii: ".")),
            !bytes[(secondDot + 1)...].contains(UInt8(ascii: "."))
        else { return nil }
        guard let headerData = Base64URL.decode(bytes: bytes[..<firstDot]),
            let claimsData = Base64URL.decode(bytes: bytes[(firstDot + 1)..<secondDot]),
            let signature = Base64URL.decode(bytes: bytes[(secondDot + 1)...]),
            let header = try? JSONValue.decode(headerData), header.isObject,
            let claims = try? JSONValue.decode(claimsData), claims.isObject
        else { return nil }
        self.header = header
        self.claims = claims
        self.signingInput = Data(bytes[..<secondDot])
        self.signature = signature
    }

    /// Whether a string looks like a compact JWS at all (three dot-separated segments, a JSON
    /// header), used to tell clients that sent an id token where an access token belongs.
    public static func looksLikeJWT(_ token: String) -> Bool {
        token.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2 && token.hasPrefix("eyJ")
    }

    /// Encodes header and claims and signs them with `sign`.
    public static func make(header: JSONValue, claims: JSONValue, sign: (Data) throws -> Data) rethrows -> String {
        let input = Base64URL.encode(header.encoded()) + "." + Base64URL.encode(claims.encoded())
        return input + "." + Base64URL.encode(try sign(Data(input.utf8)))
    }
}
