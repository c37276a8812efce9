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
        guard let newest = keys.filter({ $0.retiredAt == nil }).max(by: { $0.createdAt < $1.createdAt }) ?? keys.first
        else { throw ConfigurationError("no session signing key") }
        signing = newest
        // A retired key verifies until the last token it signed has expired. The most recently
        // retired one always stays: a running server keeps signing with it until it restarts, so
        // its retirement time says nothing about when its last token was issued.
        let lastRetired = keys.filter { $0.retiredAt != nil }
            .max { ($0.retiredAt ?? .distantPast) < ($1.retiredAt ?? .distantPast) }
        let live = keys.filter { key in
            key.kid == newest.kid || key.kid == lastRetired?.kid
                || (key.retiredAt.map { now.timeIntervalSince($0) < accessTokenLifetime } ?? true)
        }
        verifying = Dictionary(live.map { ($0.kid, $0) }, uniquingKeysWith: { first, _ in first })
        jwks = JSONValue.object(["keys": .array(live.map(\.jwk))]).encoded()
    }

    /// Loads the keys from the store, creating the first one on first start.
    static func load(
        from store: any LatchkeyStore, now: Date, accessTokenLifetime: TimeInterval
    ) async throws
        -> SessionKeyRing
    {
        var stored = try await store.signingKeys()
        if stored.isEmpty {
            let key = SessionSigningKey.generate(now: now)
            try await store.addSigningKey(
                StoredSigningKey(kid: key.kid, privateKey: key.rawPrivateKey, createdAt: now, retiredAt: nil))
            stored = try await store.signingKeys()
        }
        let keys = try stored.map {
            try SessionSigningKey(rawPrivateKey: $0.privateKey, createdAt: $0.createdAt, retiredAt: $0.retiredAt)
        }
        return try SessionKeyRing(keys: keys, now: now, accessTokenLifetime: accessTokenLifetime)
    }
}

/// Adds a new session signing key to `store`, retiring the current one for signing.
/// - Returns: the new key's id.
public func rotateSigningKey(in store: any LatchkeyStore, now: Date) async throws -> String {
    let key = SessionSigningKey.generate(now: now)
    try await store.addSigningKey(
        StoredSigningKey(kid: key.kid, privateKey: key.rawPrivateKey, createdAt: now, retiredAt: nil))
    return key.kid
}
