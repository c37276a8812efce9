import Foundation
import HTTPTypes
import LatchkeyAPI
import NIOCore

/// The session signing keys in memory: the newest signs, every key whose tokens may still be
/// alive verifies and is published in the JWKS. Loaded once at start (and created on first start),
/// so no request touches the database or parses a key.
struct SessionKeyRing: Sendable {
    let signing: SessionSigningKey
    let verifying: [String: SessionSigningKey]
    /// The JWKS document, serialised once.
    let jwks: Data

    init(keys: [SessionSigningKey], now: Date, accessTokenLifetime: TimeInterval) throws {
        let roles = SigningKeyRole.roles(
            keys.map { ($0.kid, $0.createdAt, $0.retiredAt) }, now: now, accessTokenLifetime: accessTokenLifetime)
        guard let newest = keys.first(where: { roles[$0.kid] == .signing }) else {
            throw ConfigurationError("no session signing key")
        }
        signing = newest
        let live = keys.filter { roles[$0.kid] != .retired }
        verifying = Dictionary(live.map { ($0.kid, $0) }, uniquingKeysWith: { first, _ in first })
        jwks = JSONValue.object(["keys": .array(live.map(\.jwk))]).encoded()
    }

    /// Loads the keys from the store, creating the first one on first start, and stores again,
    /// sealed under the current key-encryption key, every key kept plain or under an earlier one.
    ///
    /// - Returns: the ring, and how many stored keys were sealed again.
    static func load(
        from store: any LatchkeyStore, protection: SigningKeyProtection, now: Date, accessTokenLifetime: TimeInterval
    ) async throws -> (ring: SessionKeyRing, resealed: Int) {
        if try await store.signingKeys().isEmpty {
            _ = try await rotateSigningKey(in: store, protection: protection, now: now)
        }
        let (keys, resealed) = try await openAndReseal(in: store, protection: protection)
        return (try SessionKeyRing(keys: keys, now: now, accessTokenLifetime: accessTokenLifetime), resealed)
    }
}

/// Opens every stored key (so a wrong or missing key-encryption key is found now, not at the next
/// start), refuses a mixture of plain and sealed keys, and seals again under the current
/// key-encryption key every key kept plain or under a previous one.
///
/// Plain keys are sealed only when every stored key is plain: the one-time move of a database
/// from before encryption. Once keys are sealed, a plain row can only have been written around
/// Latchkey, and signing with it would let whoever wrote it forge sessions.
/// - Returns: the opened keys, and how many were sealed again.
private func openAndReseal(
    in store: any LatchkeyStore, protection: SigningKeyProtection
) async throws -> (keys: [SessionSigningKey], resealed: Int) {
    let rows = try await store.signingKeys()
    let plain = rows.filter { !SigningKeyProtection.isSealed($0.privateKey) }
    if let row = plain.first, plain.count < rows.count {
        throw ConfigurationError(
            "session signing key \(row.kid) is stored unencrypted while the others are sealed: it was not written by Latchkey; remove it"
        )
    }
    // Without a key-encryption key a sealed row does not open: `keys rotate` cannot add a plain
    // key beside sealed ones.
    let keys = try rows.map { row in
        let key = try SessionSigningKey(
            rawPrivateKey: try protection.open(row.privateKey, kid: row.kid), createdAt: row.createdAt,
            retiredAt: row.retiredAt)
        // The kid is the public key's thumbprint: a key that opens but belongs to another row
        // was moved there.
        guard key.kid == row.kid else {
            throw ConfigurationError("session signing key \(row.kid) holds another key's material")
        }
        return key
    }
    var resealed: [String: Data] = [:]
    for (row, key) in zip(rows, keys) where protection.needsResealing(row.privateKey) {
        resealed[row.kid] = try protection.seal(key.rawPrivateKey, kid: row.kid)
    }
    if !resealed.isEmpty { try await store.replaceSigningKeyMaterial(resealed) }
    return (keys, resealed.count)
}

/// Adds a new session signing key to `store`, sealed as `protection` says, retiring the current
/// one for signing. Every stored key is opened first, and sealed again where needed, so the new
/// key never joins keys under another key-encryption key, or sealed keys as the only plain one.
/// - Returns: the new key's id.
public func rotateSigningKey(
    in store: any LatchkeyStore, protection: SigningKeyProtection, now: Date
) async throws -> String {
    _ = try await openAndReseal(in: store, protection: protection)
    let key = SessionSigningKey.generate(now: now)
    try await store.addSigningKey(
        StoredSigningKey(
            kid: key.kid, privateKey: try protection.seal(key.rawPrivateKey, kid: key.kid), createdAt: now,
            retiredAt: nil))
    return key.kid
}

/// Seals again, under the current key-encryption key of `protection`, every stored signing key
/// kept plain or under one of its previous keys (`latchkey keys rewrap`); servers do the same at
/// start.
/// - Returns: how many keys were sealed again.
public func resealSigningKeys(in store: any LatchkeyStore, protection: SigningKeyProtection) async throws -> Int {
    try await openAndReseal(in: store, protection: protection).resealed
}

/// A session signing key's role now, the same for the servers and `latchkey keys list`.
public enum SigningKeyRole: String, Sendable {
    /// Signs new access tokens.
    case signing
    /// Signs nothing new; published and verifying until its tokens expire.
    case verifying
    /// Its tokens have all expired; no longer published.
    case retired

    /// Each key's role: the newest unretired key signs; a retired key verifies until the last
    /// token it signed has expired; the most recently retired one always verifies (a running
    /// server keeps signing with it until it restarts, so its retirement time says nothing about
    /// when its last token was issued).
    public static func roles(
        _ keys: [(kid: String, createdAt: Date, retiredAt: Date?)], now: Date, accessTokenLifetime: TimeInterval
    ) -> [String: SigningKeyRole] {
        let newest =
            keys.filter { $0.retiredAt == nil }.max { $0.createdAt < $1.createdAt }?.kid ?? keys.first?.kid
        let lastRetired = keys.filter { $0.retiredAt != nil }
            .max { ($0.retiredAt ?? .distantPast) < ($1.retiredAt ?? .distantPast) }?.kid
        var roles: [String: SigningKeyRole] = [:]
        for key in keys {
            let verifies =
                key.kid == lastRetired
                || (key.retiredAt.map { now.timeIntervalSince($0) < accessTokenLifetime } ?? true)
            roles[key.kid] = key.kid == newest ? .signing : verifies ? .verifying : .retired
        }
        return roles
    }
}
