import Crypto
import Foundation
import LatchkeyAPI

/// `appsecret_proof`: lowercase hex HMAC-SHA256 of the access token keyed with the app secret (§5.2).
enum AppSecretProof {
    static func compute(accessToken: String, secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(accessToken.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return Hex.encode(mac)
    }

    /// Constant-time check of a presented proof, so timing does not reveal how much of it matched.
    static func isValid(_ proof: String, accessToken: String, secret: String) -> Bool {
        ConstantTime.equals(proof.lowercased(), compute(accessToken: accessToken, secret: secret))
    }
}
