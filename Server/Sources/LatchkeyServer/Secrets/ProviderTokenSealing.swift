import Crypto
import Foundation
import LatchkeyShared

/// How a provider's refresh token is stored: sealed with AES-256-GCM under the key-encryption key,
/// as session signing keys are, so a copy of the database alone cannot act as the app at Apple.
/// Without a key-encryption key (`LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS`) it is stored as is.
///
/// A sealed token is `LKT1` ‖ the KEK's 8-byte id ‖ nonce (12) ‖ ciphertext ‖ tag (16). The
/// provider, subject and client id are authenticated data: a sealed token copied onto another
/// identity's row does not open.
struct ProviderTokenSealing: Sendable {
    let protection: SigningKeyProtection

    static let magic = Data("LKT1".utf8)

    /// What every token sealed under the current key-encryption key begins with; `nil` when there
    /// is none (tokens are then stored plain).
    var currentPrefix: Data? { protection.current.map { Self.magic + $0.fingerprint } }

    /// Seals again, in batches, every stored token that is plain or sealed under an earlier
    /// key-encryption key, so that an earlier key can be retired (`LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS`)
    /// without losing the tokens account deletion revokes. A token that does not open is left as
    /// it is (and its revocation fails, audited) rather than guessed at.
    /// - Returns: how many were sealed again, and how many could not be opened.
    func resealAll(in store: any LatchkeyStore, batchSize: Int) async throws -> (resealed: Int, unopened: Int) {
        guard let prefix = currentPrefix else { return (0, 0) }
        return try await SigningKeyProtection.resealInBatches(batchSize: batchSize) { skip, limit in
            try await store.providerTokensToReseal(sealedPrefix: prefix, skip: skip, limit: limit)
        } reseal: { token in
            guard
                let plain = open(
                    token.token, provider: token.provider, subject: token.subject, clientID: token.clientID)
            else { return nil }
            let sealed = try seal(plain, provider: token.provider, subject: token.subject, clientID: token.clientID)
            return try await store.replaceProviderToken(token, with: sealed)
        }
    }

    /// The stored form of `token`.
    func seal(_ token: String, provider: String, subject: String, clientID: String) throws -> Data {
        let raw = Data(token.utf8)
        return try protection.sealAtRest(
            raw, magic: Self.magic,
            associatedData: Self.associatedData(provider: provider, subject: subject, clientID: clientID)) ?? raw
    }

    /// The token `stored` holds, or `nil` when it cannot be opened (a key-encryption key no longer
    /// configured, or a row altered): such a token is never sent anywhere.
    func open(_ stored: Data, provider: String, subject: String, clientID: String) -> String? {
        guard stored.prefix(4) == Self.magic, stored.count > 4 + 8 + 12 + 16 else {
            return String(data: stored, encoding: .utf8)
        }
        return protection.openAtRest(
            stored, magic: Self.magic,
            associatedData: Self.associatedData(provider: provider, subject: subject, clientID: clientID)
        ).flatMap { String(data: $0, encoding: .utf8) }
    }

    private static func associatedData(provider: String, subject: String, clientID: String) -> Data {
        // Lengths first, so no two triples share an encoding.
        Data(
            "latchkey.provider-token.v1:\(provider.utf8.count):\(provider):\(subject.utf8.count):\(subject):\(clientID)"
                .utf8)
    }
}
