import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyCrypto

/// Builds compact JWS tokens (RFC 7515) for id tokens, including the deliberately broken ones that
/// the control API hands out so that verifiers can be tested against each attack.
enum JWS {
    /// How the token is signed.
    enum Signature {
        /// RS256 with the key; the honest case.
        case rs256(SigningKey)
        /// HS256 keyed with the given bytes: the RS256/HS256 confusion attack uses the public key PEM.
        case hs256(Data)
        /// `alg: none`, empty signature segment.
        case none
        /// RS256 signature, then one bit flipped.
        case corruptedRS256(SigningKey)
    }

    static func compact(header: JSONValue, payload: JSONValue, signature: Signature) throws -> String {
        try CompactJWS.make(header: header, claims: payload) { signingInput in
            switch signature {
            case .rs256(let key):
                return try key.signRS256(signingInput)
            case .hs256(let secret):
                return Data(HMAC<SHA256>.authenticationCode(for: signingInput, using: SymmetricKey(data: secret)))
            case .none:
                return Data()
            case .corruptedRS256(let key):
                var signed = try key.signRS256(signingInput)
                signed[signed.startIndex] ^= 0x01
                return signed
            }
        }
    }
}
