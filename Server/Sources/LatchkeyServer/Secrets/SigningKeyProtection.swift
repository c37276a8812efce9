import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// How session signing keys are stored: sealed with AES-256-GCM under the key-encryption key, or
/// (explicitly allowed only) as plain bytes.
///
/// A sealed key is `LKE1` ‖ the KEK's 8-byte id ‖ nonce (12) ‖ ciphertext (32) ‖ tag (16). The
/// key's `kid` is authenticated data, so a sealed key copied onto another row does not open, and
/// the `kid` is derived from the public key, so an opened key is checked against its row too.
package struct SigningKeyProtection: Sendable {
    /// Seals new keys and opens keys sealed under it; `nil` stores keys in plain bytes.
    package let current: KeyEncryptionKey?
    /// Earlier KEKs: keys sealed under them still open, and are sealed again under `current`.
    package let previous: [KeyEncryptionKey]

    static let magic = Data("LKE1".utf8)
    static let sealedCount = 4 + 8 + 12 + 32 + 16

    /// - Parameters:
    ///   - current: the KEK new keys are sealed under; `nil` for plain storage.
    ///   - previous: KEKs being retired (re-wrapping).
    package init(current: KeyEncryptionKey?, previous: [KeyEncryptionKey] = []) {
        self.current = current
        self.previous = previous
    }

    /// The protection a configuration asks for.
    package init(_ configuration: ServerConfiguration) {
        self.init(
            current: configuration.secrets.keyEncryptionKey, previous: configuration.secrets.previousKeyEncryptionKeys)
    }

    /// The stored form of a key's raw private scalar.
    func seal(_ raw: Data, kid: String) throws -> Data {
        guard let current else { return raw }
        let box = try AES.GCM.seal(raw, using: current.key, authenticating: Self.associatedData(kid))
        guard let combined = box.combined else { throw SigningKeyError.sealingFailed }
        return Self.magic + current.fingerprint + combined
    }

    /// The raw private scalar of a stored key.
    /// - Throws: `ConfigurationError` naming what to set when the key cannot be opened.
    func open(_ stored: Data, kid: String) throws -> Data {
        guard Self.isSealed(stored) else { return stored }
        let fingerprint = Data(stored.dropFirst(4).prefix(8))
        let id = Hex.encode(fingerprint)
        guard let kek = ([current].compactMap { $0 } + previous).first(where: { $0.fingerprint == fingerprint }) else {
            throw ConfigurationError(
                current == nil
                    ? "session signing key \(kid) is encrypted under key-encryption key \(id): set LATCHKEY_KEY_ENCRYPTION_KEY_FILE to it"
                    : "session signing key \(kid) is encrypted under key-encryption key \(id), which is neither LATCHKEY_KEY_ENCRYPTION_KEY nor one of LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS"
            )
        }
        do {
            let box = try AES.GCM.SealedBox(combined: Data(stored.dropFirst(12)))
            return try AES.GCM.open(box, using: kek.key, authenticating: Self.associatedData(kid))
        } catch {
            throw ConfigurationError(
                "session signing key \(kid) does not decrypt under key-encryption key \(id): the stored key was altered"
            )
        }
    }

    /// Whether a stored key should be stored again: plain while a KEK is configured, or sealed
    /// under a KEK other than the current one.
    func needsResealing(_ stored: Data) -> Bool {
        guard let current else { return false }
        return !Self.isSealed(stored) || Data(stored.dropFirst(4).prefix(8)) != current.fingerprint
    }

    /// Whether a stored key is sealed (rather than 32 plain bytes); also for the `keys` commands.
    package static func isSealed(_ stored: Data) -> Bool { stored.count == sealedCount && stored.prefix(4) == magic }

    private static func associatedData(_ kid: String) -> Data { Data("latchkey.signing-key.v1:\(kid)".utf8) }

    /// Seals again, batch by batch, the rows `fetch` finds stored plain or under an earlier
    /// key-encryption key: the loop shared by providers' tokens and factor secrets.
    /// - Parameters:
    ///   - fetch: up to `limit` rows still to seal, skipping the first `skip` (those that did not open).
    ///   - reseal: seals one row again; `nil` when it does not open (left as it is), else whether the
    ///     store replaced it (a newer value may have been written meanwhile).
    /// - Returns: how many were sealed again, and how many could not be opened.
    static func resealInBatches<Row: Sendable>(
        batchSize: Int, fetch: (_ skip: Int, _ limit: Int) async throws -> [Row],
        reseal: (Row) async throws -> Bool?
    ) async throws -> (resealed: Int, unopened: Int) {
        var resealed = 0
        var unopened = 0
        while !Task.isCancelled {
            let batch = try await fetch(unopened, batchSize)
            for row in batch {
                switch try await reseal(row) {
                case nil: unopened += 1
                case true?: resealed += 1
                case false?: break
                }
            }
            if batch.count < batchSize { break }
        }
        return (resealed, unopened)
    }

    /// `data` sealed under the current key-encryption key as the secrets kept beside signing keys
    /// are (providers' tokens, factor secrets): `magic` ‖ the KEK's 8-byte id ‖ nonce (12) ‖
    /// ciphertext ‖ tag (16), with `associatedData` authenticated; `nil` without a KEK (stored plain).
    func sealAtRest(_ data: Data, magic: Data, associatedData: Data) throws -> Data? {
        guard let current else { return nil }
        let box = try AES.GCM.seal(data, using: current.key, authenticating: associatedData)
        guard let combined = box.combined else { throw SigningKeyError.sealingFailed }
        return magic + current.fingerprint + combined
    }

    /// What `sealAtRest` sealed, under the current or an earlier KEK; `nil` when it does not open (a
    /// KEK no longer configured, or bytes altered or moved to another row).
    func openAtRest(_ stored: Data, magic: Data, associatedData: Data) -> Data? {
        let header = magic.count + 8
        guard stored.prefix(magic.count) == magic, stored.count > header + 12 + 16 else { return nil }
        let fingerprint = Data(stored.dropFirst(magic.count).prefix(8))
        guard let kek = ([current].compactMap { $0 } + previous).first(where: { $0.fingerprint == fingerprint }),
            let box = try? AES.GCM.SealedBox(combined: Data(stored.dropFirst(header)))
        else { return nil }
        return try? AES.GCM.open(box, using: kek.key, authenticating: associatedData)
    }
}

/// A signing key could not be sealed.
enum SigningKeyError: Error, Sendable {
    case sealingFailed
}
