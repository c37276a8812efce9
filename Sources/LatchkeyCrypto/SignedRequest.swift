import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// Facebook's `signed_request`: `base64url(HMAC-SHA256(secret, encodedPayload)) + "." + encodedPayload`
/// (facebook-protocol.md §9.1). The emulator signs them; `verify` is what the server's deauthorize
/// and data-deletion callbacks will check them with. It checks the MAC and the algorithm only: a
/// receiver must also bound the payload's `issued_at`, since a captured request stays valid.
///
/// The MAC covers the *encoded* payload segment, not the JSON, and the segments are unpadded
/// base64url; a trailing `=` on the signature is tolerated, as one report says Facebook sends it.
public enum SignedRequest {
    /// Why a signed request was refused.
    public enum Failure: Error, Sendable, Equatable {
        /// Not two base64url segments with a JSON object payload, or over the size cap.
        case malformed
        /// The signature is not the app secret's MAC of the payload segment.
        case signature
        /// `algorithm` is not `HMAC-SHA256`.
        case algorithm
    }

    /// The longest signed request read: Facebook's carry a user id, an algorithm, a time and at
    /// most a code, well under 1 KB.
    public static let maximumLength = 8 * 1024

    /// Signs `payload` (which should carry `algorithm: HMAC-SHA256`) with the app secret.
    public static func sign(payload: JSONValue, secret: String) -> String {
        let encodedPayload = Base64URL.encode(payload.encoded())
        return signature(encodedPayload: encodedPayload, secret: secret) + "." + encodedPayload
    }

    /// The signature segment for an already encoded payload segment.
    public static func signature(encodedPayload: String, secret: String) -> String {
        Base64URL.encode(Data(mac(encodedPayload, secret: secret)))
    }

    /// The payload of a signed request made with `secret`, after checking its MAC in constant time
    /// and its algorithm. The signature is checked before the payload is parsed, so a stranger's
    /// input never reaches the JSON reader.
    public static func verify(_ signedRequest: String, secret: String) throws(Failure) -> JSONValue {
        let bytes = Array(signedRequest.utf8)
        guard bytes.count <= maximumLength, let dot = bytes.firstIndex(of: UInt8(ascii: ".")),
            !bytes[(dot + 1)...].contains(UInt8(ascii: ".")),
            let signature = Base64URL.decode(bytes: bytes[..<dot]), signature.count == SHA256.byteCount
        else { throw .malformed }
        let encodedPayload = String(decoding: bytes[(dot + 1)...], as: UTF8.self)
        guard
            HMAC<SHA256>.isValidAuthenticationCode(
                signature, authenticating: Data(encodedPayload.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        else { throw .signature }
        guard let payloadData = Base64URL.decode(encodedPayload), let payload = try? JSONValue.decode(payloadData),
            payload.isObject
        else { throw .malformed }
        // Exactly Facebook's spelling: a re-spelling (`hmac-sha256`, a Turkish dotless `ı` that
        // upper-cases to `I`) is not something Facebook sends, so it is not something to accept.
        guard payload["algorithm"]?.stringValue == "HMAC-SHA256" else { throw .algorithm }
        return payload
    }

    private static func mac(_ encodedPayload: String, secret: String) -> HashedAuthenticationCode<SHA256> {
        HMAC<SHA256>.authenticationCode(for: Data(encodedPayload.utf8), using: SymmetricKey(data: Data(secret.utf8)))
    }
}
