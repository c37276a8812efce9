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

    /// What every secret sealed under the current key-encryption key begins with; `nil` when there
    /// is none (secrets are then stored plain).
    var currentPrefix: Data? { protection.current.map { Self.magic + $0.fingerprint } }

    /// Seals again, in batches, every factor secret stored plain or under an earlier key-encryption
    /// key, so an earlier key can be retired (`LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS`) without
    /// locking people out of their second factor. A secret that does not open is left as it is.
    /// - Returns: how many were sealed again, and how many could not be opened.
    func resealAll(in store: any LatchkeyStore, batchSize: Int) async throws -> (resealed: Int, unopened: Int) {
        guard let prefix = currentPrefix else { return (0, 0) }
        return try await SigningKeyProtection.resealInBatches(batchSize: batchSize) { skip, limit in
            try await store.factorSecretsToReseal(sealedPrefix: prefix, skip: skip, limit: limit)
        } reseal: { factor in
            guard let plain = open(factor.secret, userID: factor.userID, factorID: factor.id) else { return nil }
            let sealed = try seal(plain, userID: factor.userID, factorID: factor.id)
            return try await store.replaceFactorSecret(id: factor.id, old: factor.secret, with: sealed)
        }
    }

    /// The stored form of `secret`.
    package func seal(_ secret: Data, userID: String, factorID: String) throws -> Data {
        try protection.sealAtRest(
            secret, magic: Self.magic, associatedData: Self.associatedData(userID: userID, factorID: factorID))
            ?? secret
    }

    /// The secret `stored` holds, or `nil` when it cannot be opened (a key-encryption key no
    /// longer configured, a row altered or moved): such a factor matches no code.
    package func open(_ stored: Data, userID: String, factorID: String) -> Data? {
        guard stored.prefix(4) == Self.magic, stored.count > 4 + 8 + 12 + 16 else {
            // A plain secret is exactly `TOTP.secretLength` bytes; anything else is not one.
            return stored.count == TOTP.secretLength ? stored : nil
        }
        return protection.openAtRest(
            stored, magic: Self.magic, associatedData: Self.associatedData(userID: userID, factorID: factorID))
    }

    private static func associatedData(userID: String, factorID: String) -> Data {
        // Lengths first, so no two pairs share an encoding.
        Data("latchkey.factor-secret.v1:\(userID.utf8.count):\(userID):\(factorID)".utf8)
    }
}
