import Foundation
import LatchkeyShared

/// Which of the configured key-encryption keys opens a stored signing key: what `latchkey keys
/// list` shows per key, so that during a key incident (`latchkey.keys.refresh_failed`) it says
/// whether the key an operator holds is the one the keys need.
package enum SigningKeyOpening: Sendable, Equatable {
    /// Stored unsealed; servers without a key-encryption key use it, servers with one refuse it.
    case plain
    /// Opens under `LATCHKEY_KEY_ENCRYPTION_KEY` (its id).
    case current(String)
    /// Opens under one of `LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS` (its id).
    case previous(String)
    /// Opens under neither; why.
    case refused(String)

    /// How a stored key opens under `protection`: tried as a server tries it, the key's id
    /// checked against its material (a key moved to another row does not count as opening).
    package init(_ stored: StoredSigningKey, protection: SigningKeyProtection) {
        guard SigningKeyProtection.isSealed(stored.privateKey) else {
            self = .plain
            return
        }
        let id = Hex.encode(Data(stored.privateKey.dropFirst(4).prefix(8)))
        do {
            let raw = try protection.open(stored.privateKey, kid: stored.kid)
            let key = try SessionSigningKey(rawPrivateKey: raw, createdAt: stored.createdAt, retiredAt: nil)
            guard key.kid == stored.kid else {
                self = .refused("holds another key's material")
                return
            }
            self = protection.current?.id == id ? .current(id) : .previous(id)
        } catch {
            self = .refused("\(error)")
        }
    }

    /// Whether servers with `protection` can use the key: it opens, or it is plain and no
    /// key-encryption key is configured.
    package func usable(under protection: SigningKeyProtection) -> Bool {
        switch self {
        case .current, .previous: true
        case .plain: protection.current == nil
        case .refused: false
        }
    }

    /// As `keys list` shows it.
    package var shown: String {
        switch self {
        case .plain: "plain (unsealed)"
        case .current(let id): "current \(id)"
        case .previous(let id): "previous \(id)"
        case .refused: "NONE"
        }
    }
}
