import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

/// The emulator's spoiled signed requests, for testing a receiver's checks; signing itself is
/// `LatchkeyCrypto.SignedRequest`, the same code the server verifies with.
extension SignedRequest {
    /// Ways to spoil a signed request, for testing a receiver's checks.
    public enum Tampering: String, Sendable, Codable, CaseIterable {
        /// The signature of a different payload.
        case signature
        /// `algorithm` other than `HMAC-SHA256`, correctly signed.
        case algorithm
        /// Signed with another secret.
        case secret
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
