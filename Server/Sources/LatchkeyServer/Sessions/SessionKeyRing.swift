import Foundation
import HTTPTypes
import LatchkeyAPI
import NIOCore
import Synchronization

/// The session signing keys in memory at one moment: one key signs; every key whose tokens may
/// still be alive, and every key about to sign, verifies and is published in the JWKS. Built at
/// start and again by `SessionKeyRefresher`, so no request touches the database or parses a key.
struct SessionKeyRing: Sendable {
    let signing: SessionSigningKey
    let verifying: [String: SessionSigningKey]
    /// The JWKS document, serialised once.
    let jwks: Data
    /// The keys an Easy Login request may have been sealed under and still be alive, by
    /// `requestKeyID`: the signing key, and each earlier key until `sealedRequestWindow` after it
    /// stopped signing (its successor's activation), however long ago it stopped verifying tokens.
    /// Not every stored key: a key rotated out long ago (an old backup's, one suspected stolen)
    /// must not seal a request the server would still act on.
    let requestKeys: [Data: SessionSigningKey]

    /// How long clients may cache the JWKS (`Cache-Control: max-age`, seconds): a new key must be
    /// published at least this long before it signs (`LATCHKEY_KEY_ACTIVATION_DELAY`).
    static let jwksMaxAge: TimeInterval = 300

    /// The ring of `keys` at `now` (`SigningKeyRole.roles` decides each key's part).
    /// - Parameter sealedRequestWindow: how long after a key stopped signing a request it sealed
    ///   may still come back (the Easy Login lifetime, the clock skew and the grace in which an
    ///   expired request is still reported to its app).
    init(
        keys: [SessionSigningKey], now: Date, accessTokenLifetime: TimeInterval, activationDelay: TimeInterval = 0,
        sealedRequestWindow: TimeInterval = PruneCutoffs.pendingAuthorizationGrace
    )
        throws
    {
        let roles = SigningKeyRole.roles(
            keys.map { ($0.kid, $0.createdAt, $0.retiredAt) }, now: now, accessTokenLifetime: accessTokenLifetime,
            activationDelay: activationDelay)
        guard let signing = keys.first(where: { roles[$0.kid] == .signing }) else {
            throw ConfigurationError("no session signing key")
        }
        self.signing = signing
        let live = keys.filter { roles[$0.kid] != .retired }
        verifying = Dictionary(live.map { ($0.kid, $0) }, uniquingKeysWith: { first, _ in first })
        jwks = JSONValue.object(["keys": .array(live.map(\.jwk))]).encoded()
        // A key signs until the next newer key activates; requests it sealed then live one window.
        let byAge = keys.sorted { $0.createdAt < $1.createdAt }
        let sealing = byAge.enumerated().filter { index, _ in
            guard index + 1 < byAge.count else { return true }
            let stoppedSigning = byAge[index + 1].createdAt.addingTimeInterval(activationDelay)
            return now.timeIntervalSince(stoppedSigning) <= sealedRequestWindow
        }.map(\.element)
        requestKeys = Dictionary(sealing.map { ($0.requestKeyID, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The refresh tokens that may replace `token`: derived under the signing key first (the one a
    /// rotation now stores), then under every other published key (the one that signed when a
    /// retried rotation happened, if the keys changed in between), each with its hash.
    func refreshSuccessors(of token: String) -> [(token: String, hash: Data)] {
        let others = verifying.values.filter { $0.kid != signing.kid }.sorted { $0.kid < $1.kid }
        return ([signing] + others).map { key in
            let successor = key.refreshSuccessor(of: token)
            return (successor, SessionTokens.hash(successor))
        }
    }

    /// Loads the keys from the store, creating the first one on first start, and stores again,
    /// sealed under the current key-encryption key, every key kept under an earlier one (plain keys
    /// are refused while a key-encryption key is set).
    ///
    /// Servers starting together on an empty database agree on one first key
    /// (`LatchkeyStore.addFirstSigningKey`): two first keys would each sign on one server only.
    /// - Returns: the ring, and how many stored keys were sealed again.
    static func load(
        from store: any LatchkeyStore, protection: SigningKeyProtection, now: Date, accessTokenLifetime: TimeInterval,
        activationDelay: TimeInterval = 0, sealedRequestWindow: TimeInterval = PruneCutoffs.pendingAuthorizationGrace
    ) async throws -> (ring: SessionKeyRing, resealed: Int) {
        if try await store.signingKeys().isEmpty {
            _ = try await store.addFirstSigningKey(try newSealedKey(protection: protection, now: now))
        }
        let (keys, resealed) = try await openAndReseal(in: store, protection: protection)
        let ring = try SessionKeyRing(
            keys: keys, now: now, accessTokenLifetime: accessTokenLifetime, activationDelay: activationDelay,
            sealedRequestWindow: sealedRequestWindow)
        return (ring, resealed)
    }
}

/// A server's current `SessionKeyRing`, replaced whole by `SessionKeyRefresher`: a request reads
/// one ring, so the key it signs with and the JWKS it serves always belong together.
final class SessionKeys: Sendable {
    private let state: Mutex<(ring: SessionKeyRing, refusal: String?)>

    init(_ ring: SessionKeyRing) { self.state = Mutex((ring, nil)) }

    /// The ring now.
    var current: SessionKeyRing { state.withLock { $0.ring } }

    /// Why the last refresh refused the stored keys (one no longer opens here, a plain key), or
    /// `nil` once a refresh succeeds: this server keeps signing with its ring but would not start
    /// again, which `/ready` reports.
    var refusal: String? { state.withLock { $0.refusal } }

    /// Puts `new` in place for every later request, and forgets any earlier refusal.
    func replace(with new: SessionKeyRing) { state.withLock { $0 = (new, nil) } }

    /// Records that the stored keys were refused, keeping the ring in use.
    func refused(_ reason: String) { state.withLock { $0.refusal = reason } }

    /// What `/ready`, which is public, says of refused keys: the kind of trouble and where the
    /// details are, not which key or key-encryption key (a stranger learns nothing to act on).
    static let refusalSummary =
        "the stored signing keys do not open with this server's key-encryption key settings, or one is stored "
        + "unencrypted; this server keeps the keys it has but would not start again (the log's "
        + "latchkey.keys.refresh_failed says which key and why)"
}

/// Opens every stored key (so a wrong or missing key-encryption key is found now, not at the next
/// start), refuses plain keys while a key-encryption key is configured, and seals again under the
/// current key-encryption key every key kept under a previous one.
///
/// Plain keys are sealed only by `latchkey keys rewrap --seal-plain-keys` (`sealingPlainKeys`), and only when every
/// stored key is plain: the one-time, deliberate move of a database from before encryption. A
/// server with a key-encryption key refuses any plain key, at start and at every refresh: a row
/// written around Latchkey (even every row at once, which a server sealing "an old database" on
/// its own would have taken for the move) would let whoever wrote it forge sessions.
/// - Returns: the opened keys, and how many were sealed again.
private func openAndReseal(
    in store: any LatchkeyStore, protection: SigningKeyProtection, sealingPlainKeys: Bool = false
) async throws -> (keys: [SessionSigningKey], resealed: Int) {
    let rows = try await store.signingKeys()
    let keys = try openSigningKeys(rows, protection: protection, sealingPlainKeys: sealingPlainKeys)
    var resealed: [String: Data] = [:]
    for (row, key) in zip(rows, keys) where protection.needsResealing(row.privateKey) {
        resealed[row.kid] = try protection.seal(key.rawPrivateKey, kid: row.kid)
    }
    if !resealed.isEmpty { try await store.replaceSigningKeyMaterial(resealed) }
    return (keys, resealed.count)
}

/// Opens stored keys, refusing a plain key while a key-encryption key is configured (unless
/// `sealingPlainKeys` and every key is plain), a plain key among sealed ones, and a row whose key
/// is another's.
func openSigningKeys(
    _ rows: [StoredSigningKey], protection: SigningKeyProtection, sealingPlainKeys: Bool = false
) throws -> [SessionSigningKey] {
    let plain = rows.filter { !SigningKeyProtection.isSealed($0.privateKey) }
    if let row = plain.first, plain.count < rows.count {
        throw ConfigurationError(
            "session signing key \(row.kid) is stored unencrypted while the others are sealed: it was not written by Latchkey; remove it"
        )
    }
    if let row = plain.first, protection.current != nil, !sealingPlainKeys {
        throw ConfigurationError(
            "session signing key \(row.kid) (created \(row.createdAt.formatted(.iso8601))) is stored unencrypted while "
                + "LATCHKEY_KEY_ENCRYPTION_KEY is set: if this database is from before encryption, seal its keys once "
                + "with `latchkey keys rewrap --seal-plain-keys` (same settings); otherwise it was written around "
                + "Latchkey: remove it")
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
    return keys
}

/// Adds a new session signing key to `store`, sealed as `protection` says, retiring the current
/// one for signing. Every stored key is opened first, and sealed again where needed, so the new
/// key never joins keys under another key-encryption key, or sealed keys as the only plain one.
/// - Returns: the new key's id.
package func rotateSigningKey(
    in store: any LatchkeyStore, protection: SigningKeyProtection, now: Date
) async throws -> String {
    _ = try await openAndReseal(in: store, protection: protection)
    let key = try newSealedKey(protection: protection, now: now)
    try await store.addSigningKey(key)
    return key.kid
}

/// A new random signing key, sealed as `protection` says, ready to store.
private func newSealedKey(protection: SigningKeyProtection, now: Date) throws -> StoredSigningKey {
    let key = SessionSigningKey.generate(now: now)
    return StoredSigningKey(
        kid: key.kid, privateKey: try protection.seal(key.rawPrivateKey, kid: key.kid), createdAt: now, retiredAt: nil)
}

/// Seals again, under the current key-encryption key of `protection`, every stored signing key
/// kept under one of its previous keys (`latchkey keys rewrap`; servers do the same at start).
/// - Parameter sealingPlainKeys: also seal keys stored plain, when every key is: the one
///   deliberate step (`--seal-plain-keys`) that moves a database from before encryption. Never
///   implied, since routine re-wrapping would otherwise seal keys a database writer swapped in.
/// - Returns: how many keys were sealed again.
package func resealSigningKeys(
    in store: any LatchkeyStore, protection: SigningKeyProtection, sealingPlainKeys: Bool = false
) async throws -> Int {
    try await openAndReseal(in: store, protection: protection, sealingPlainKeys: sealingPlainKeys).resealed
}

/// A session signing key's role now, the same for the servers and `latchkey keys list`.
package enum SigningKeyRole: String, Sendable {
    /// Signs new access tokens.
    case signing
    /// Added less than the activation delay ago: published and verifying, so every server and
    /// every app backend caching the JWKS knows it before any server signs with it.
    case pending
    /// Signs nothing new; published and verifying until its tokens expire.
    case verifying
    /// Its tokens have all expired; no longer published.
    case retired

    /// When a key in this role retired, as lists show it: a key goes on signing until its
    /// successor is old enough, so its stored retirement (the rotation's time) means nothing while
    /// it still signs or waits to. `keys list`, the admin API and the console alike.
    package func shownRetirement(_ retiredAt: Date?) -> Date? {
        self == .signing || self == .pending ? nil : retiredAt
    }

    /// Each key's role at `now`.
    ///
    /// A key signs once it is `activationDelay` old (the newest such key), so that every server
    /// has read it and published it first; until then the key before it goes on signing. When no
    /// key is that old (a first start), the oldest key signs, the same one on every server. A key
    /// that stopped signing verifies until the last token it signed has expired (with the delay
    /// again as a margin for servers that switched late), and the one just
    /// before the signing key always verifies (a server whose refresh failed may still sign with
    /// it). `retiredAt` is only shown (`keys list`): a key stops signing when its successor starts.
    package static func roles(
        _ keys: [(kid: String, createdAt: Date, retiredAt: Date?)], now: Date, accessTokenLifetime: TimeInterval,
        activationDelay: TimeInterval = 0
    ) -> [String: SigningKeyRole] {
        let ordered = keys.sorted { ($0.createdAt, $0.kid) < ($1.createdAt, $1.kid) }
        guard
            let signingIndex = ordered.lastIndex(where: { now.timeIntervalSince($0.createdAt) >= activationDelay })
                ?? (ordered.isEmpty ? nil : 0)
        else { return [:] }
        var roles: [String: SigningKeyRole] = [:]
        for (index, key) in ordered.enumerated() {
            if index == signingIndex {
                roles[key.kid] = .signing
            } else if index > signingIndex {
                roles[key.kid] = .pending
            } else {
                let stoppedSigning = ordered[index + 1].createdAt.addingTimeInterval(activationDelay)
                // Plus the delay again: servers move to the next key only at their next refresh,
                // and one whose refreshes fail keeps signing with this one meanwhile.
                let verifies =
                    index == signingIndex - 1
                    || now.timeIntervalSince(stoppedSigning) < accessTokenLifetime + activationDelay
                roles[key.kid] = verifies ? .verifying : .retired
            }
        }
        return roles
    }
}
