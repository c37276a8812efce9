import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// `appsecret_proof`: lowercase hex HMAC-SHA256 of the access token keyed with the app secret
/// (facebook-protocol.md §5.2). The server sends it; the emulator checks it.
public enum AppSecretProof {
    /// The proof for `accessToken` under `secret`.
    public static func compute(accessToken: String, secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(accessToken.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return Hex.encode(mac)
    }

    /// Constant-time check of a presented proof, so timing does not reveal how much of it matched.
    /// Facebook accepts the hex in either case.
    public static func isValid(_ proof: String, accessToken: String, secret: String) -> Bool {
        ConstantTime.equals(proof.lowercased(), compute(accessToken: accessToken, secret: secret))
    }
}
