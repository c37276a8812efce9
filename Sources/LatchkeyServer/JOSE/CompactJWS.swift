import Foundation
import HTTPTypes
import LatchkeyAPI
import NIOCore

/// A compact JWS split and decoded, before any check: verifiers inspect the header and claims and
/// check the signature over `signingInput` themselves.
struct CompactJWS: Sendable {
    let header: JSONValue
    let claims: JSONValue
    let signingInput: Data
    let signature: Data

    /// Splits and decodes a token; `nil` when it is not three base64url segments of JSON objects.
    ///
    /// Split on the UTF-8 bytes: `String.split` walks grapheme clusters, and was half the cost of
    /// reading an id token (docs/performance.md).
    init?(_ token: String) {
        let bytes = Array(token.utf8)
        guard bytes.count <= 16 * 1024, let firstDot = bytes.firstIndex(of: UInt8(ascii: ".")),
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

    /// Whether a string looks like a compact JWS at all (three dot-separated segments), used to tell
    /// clients that sent an id token where an access token belongs.
    static func looksLikeJWT(_ token: String) -> Bool {
        token.split(separator: ".", omittingEmptySubsequences: false).count == 3 && token.hasPrefix("eyJ")
    }

    /// Encodes header and claims and signs them with `sign`.
    static func make(header: JSONValue, claims: JSONValue, sign: (Data) throws -> Data) rethrows -> String {
        let input = Base64URL.encode(header.encoded()) + "." + Base64URL.encode(claims.encoded())
        return input + "." + Base64URL.encode(try sign(Data(input.utf8)))
    }
}
