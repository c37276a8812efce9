import Crypto
import Foundation
import LatchkeyAPI

/// Facebook's `signed_request`: `base64url(HMAC-SHA256(secret, encodedPayload)) + "." + encodedPayload`.
///
/// The MAC covers the *encoded* payload segment, not the JSON, and the segments are unpadded
/// base64url (facebook-protocol.md §9.1).
public enum SignedRequest {
    /// Ways to spoil a signed request, for testing a receiver's checks.
    public enum Tampering: String, Sendable, Codable, CaseIterable {
        /// The signature of a different payload.
        case signature
        /// `algorithm` other than `HMAC-SHA256`, correctly signed.
        case algorithm
        /// Signed with another secret.
        case secret
    }

    /// Signs `payload` (which should carry `algorithm: HMAC-SHA256`) with the app secret.
    public static func sign(payload: JSONValue, secret: String) -> String {
        let encodedPayload = Base64URL.encode(payload.encoded())
        return signature(encodedPayload: encodedPayload, secret: secret) + "." + encodedPayload
    }

    /// The signature segment for an already encoded payload segment.
    static func signature(encodedPayload: String, secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(encodedPayload.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return Base64URL.encode(Data(mac))
    }

    /// Builds a signed request and applies `tampering`, if any.
    /// - Returns: the signed request and the payload it really carries.
    static func make(payload: JSONValue, secret: String, tampering: Tampering?) -> (String, JSONValue) {
        guard case .object(var members) = payload else { return (sign(payload: payload, secret: secret), payload) }
        switch tampering {
        case nil:
            return (sign(payload: payload, secret: secret), payload)
        case .algorithm:
            members["algorithm"] = "HMAC-SHA1"
            return (sign(payload: .object(members), secret: secret), .object(members))
        case .secret:
            return (sign(payload: payload, secret: secret + "-wrong"), payload)
        case .signature:
            // The honest signature of the original payload, attached to a different payload.
            let signature = signature(encodedPayload: Base64URL.encode(payload.encoded()), secret: secret)
            members["user_id"] = .string((members["user_id"]?.stringValue ?? "") + "0")
            return (signature + "." + Base64URL.encode(JSONValue.object(members).encoded()), .object(members))
        }
    }
}
