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
    init?(_ token: String) {
        guard token.utf8.count <= 16 * 1024 else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]),
            let claimsData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? JSONValue.decode(headerData), header.isObject,
            let claims = try? JSONValue.decode(claimsData), claims.isObject
        else { return nil }
        self.header = header
        self.claims = claims
        self.signingInput = Data(parts[0].utf8) + Data(".".utf8) + Data(parts[1].utf8)
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
