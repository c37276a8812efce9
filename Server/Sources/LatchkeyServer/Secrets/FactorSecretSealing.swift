import Crypto
import Foundation

/// How a TOTP secret is stored: sealed with AES-256-GCM under the key-encryption key, as session
/// signing keys and providers' tokens are, so a copy of the database alone cannot produce anyone's
/// codes. Without a key-encryption key (`LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS`) it is stored as is.
///
/// A sealed secret is `LKF1` ‖ the KEK's 8-byte id ‖ nonce (12) ‖ ciphertext ‖ tag (16). The user
/// and factor ids are authenticated data: a secret copied onto another factor's row does not open.
package struct FactorSecretSealing: Sendable {
    /// The key-encryption keys.
    package let protection: SigningKeyProtection

    /// Creates a sealing under `protection`'s keys.
    package init(protection: SigningKeyProtection) { self.protection = protection }

    /// What a sealed secret begins with.
    static let magic = Data("LKF1".utf8)

    /// The stored form of `secret`.
    package func seal(_ secret: Data, userID: String, factorID: String) throws -> Data {
        guard let current = protection.current else { return secret }
        let box = try AES.GCM.seal(
            secret, using: current.key, authenticating: Self.associatedData(userID: userID, factorID: factorID))
        guard let combined = box.combined else { throw SigningKeyError.sealingFailed }
        return Self.magic + current.fingerprint + combined
    }

    /// The secret `stored` holds, or `nil` when it cannot be opened (a key-encryption key no
    /// longer configured, a row altered or moved): such a factor matches no code.
    package func open(_ stored: Data, userID: String, factorID: String) -> Data? {
        guard stored.prefix(4) == Self.magic, stored.count > 4 + 8 + 12 + 16 else {
            // A plain secret is exactly `TOTP.secretLength` bytes; anything else is not one.
            return stored.count == TOTP.secretLength ? stored : nil
        }
        let fingerprint = Data(stored.dropFirst(4).prefix(8))
        guard
            let kek = ([protection.current].compactMap { $0 } + protection.previous).first(where: {
                $0.fingerprint == fingerprint
            }),
            let box = try? AES.GCM.SealedBox(combined: Data(stored.dropFirst(12))),
            let secret = try? AES.GCM.open(
                box, using: kek.key, authenticating: Self.associatedData(userID: userID, factorID: factorID))
        else { return nil }
        return secret
    }

    private static func associatedData(userID: String, factorID: String) -> Data {
        // Lengths first, so no two pairs share an encoding.
        Data("latchkey.factor-secret.v1:\(userID.utf8.count):\(userID):\(factorID)".utf8)
    }
}
