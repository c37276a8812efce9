import Crypto
import Foundation
import LatchkeyAPI

/// `appsecret_proof`: lowercase hex HMAC-SHA256 of the access token keyed with the app secret (§5.2).
enum AppSecretProof {
    static func compute(accessToken: String, secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(accessToken.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return mac.map { String(format: "%02x", $0) }.joined()
    }

    /// Constant-time check of a presented proof, so timing does not reveal how much of it matched.
    static func isValid(_ proof: String, accessToken: String, secret: String) -> Bool {
        ConstantTime.equals(proof.lowercased(), compute(accessToken: accessToken, secret: secret))
    }
}

/// Comparisons whose running time does not depend on where two secrets differ.
enum ConstantTime {
    static func equals(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0
    }
}
