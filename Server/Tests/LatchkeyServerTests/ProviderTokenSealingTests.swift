import Foundation
import LatchkeyAPI
import LatchkeyShared
import Testing

@testable import LatchkeyServer

/// Apple refresh tokens at rest: sealed under the key-encryption key, bound to their row, and
/// sealed again under a new key at the start, on every backend.
@Suite("Provider tokens at rest")
struct ProviderTokenSealingTests {
    @Test("sealed, bound to the identity and client, opened by earlier keys, and sealed again under the new one")
    func sealAndReseal() async throws {
        try await StoreContractTests.onEveryBackend { name, store in
            let old = KeyEncryptionKey.generate().key
            let new = KeyEncryptionKey.generate().key
            let before = ProviderTokenSealing(protection: SigningKeyProtection(current: old))
            let sealed = try before.seal("r.apple-token", provider: "apple", subject: "s1", clientID: "app")
            #expect(!String(decoding: sealed, as: UTF8.self).contains("apple-token"), "\(name)")
            #expect(before.open(sealed, provider: "apple", subject: "s1", clientID: "app") == "r.apple-token")
            // Moved onto another identity's row, or another client's, it does not open.
            #expect(before.open(sealed, provider: "apple", subject: "s2", clientID: "app") == nil)
            #expect(before.open(sealed, provider: "apple", subject: "s1", clientID: "web") == nil)
            // Stored under the old key, one stored plain (no key then), one under a key now lost.
            try await store.saveProviderToken(
                StoredProviderToken(provider: "apple", subject: "s1", clientID: "app", token: sealed), now: .now)
            try await store.saveProviderToken(
                StoredProviderToken(provider: "apple", subject: "s2", clientID: "app", token: Data("plain".utf8)),
                now: .now)
            let lost = try ProviderTokenSealing(
                protection: SigningKeyProtection(current: KeyEncryptionKey.generate().key)
            )
            .seal("gone", provider: "apple", subject: "s3", clientID: "app")
            try await store.saveProviderToken(
                StoredProviderToken(provider: "apple", subject: "s3", clientID: "app", token: lost), now: .now)
            let after = ProviderTokenSealing(protection: SigningKeyProtection(current: new, previous: [old]))
            let (resealed, unopened) = try await after.resealAll(in: store, batchSize: 1)
            #expect(resealed == 2 && unopened == 1, "\(name)")
            let prefix = try #require(after.currentPrefix)
            #expect(
                try await store.providerTokensToReseal(sealedPrefix: prefix, skip: 0, limit: 10).map(\.subject) == [
                    "s3"
                ])
            // Under the new key alone, the resealed ones open.
            let newOnly = ProviderTokenSealing(protection: SigningKeyProtection(current: new))
            let jobs = StorageRules.revocationJobs(
                userID: "",
                tokens: try await store.providerTokensToReseal(sealedPrefix: Data("x".utf8), skip: 0, limit: 10),
                at: .now)
            let opened = jobs.compactMap { job -> String? in
                guard let subject = job.payload["subject"]?.stringValue,
                    let token = job.payload["token"]?.stringValue.flatMap(Base64URL.decode)
                else { return nil }
                return newOnly.open(token, provider: "apple", subject: subject, clientID: "app")
            }
            #expect(opened.sorted() == ["plain", "r.apple-token"], "\(name)")
            // A second pass has nothing to do.
            #expect(try await after.resealAll(in: store, batchSize: 10) == (0, 1))
        }
    }
}

/// TOTP secrets at rest: sealed under the key-encryption key and sealed again under a new one at
/// the start, on every backend, so retiring a key never locks people out of their second factor.
@Suite("Factor secrets at rest")
struct FactorSecretSealingTests {
    @Test("plain and old-key secrets are sealed again under the new key; a lost key's is left, reported")
    func reseal() async throws {
        try await StoreContractTests.onEveryBackend { name, store in
            let old = KeyEncryptionKey.generate().key
            let new = KeyEncryptionKey.generate().key
            _ = try await store.signIn(StoreContractTests.login(subject: "s", userID: "u", sessionID: "a"), now: .now)
            let secret = TOTP.newSecret()
            let stored: [(String, Data)] = [
                (
                    "f-old",
                    try FactorSecretSealing(protection: SigningKeyProtection(current: old)).seal(
                        secret, userID: "u", factorID: "f-old")
                ),
                ("f-plain", secret),
                (
                    "f-lost",
                    try FactorSecretSealing(protection: SigningKeyProtection(current: KeyEncryptionKey.generate().key))
                        .seal(
                            secret, userID: "u", factorID: "f-lost")
                ),
            ]
            for (id, bytes) in stored {
                #expect(
                    try await store.addFactor(
                        NewFactor(id: id, userID: "u", type: .totp, displayName: nil, secret: bytes, createdAt: .now),
                        pendingSince: .distantPast, limit: 10, now: .now), "\(name)")
            }
            let after = FactorSecretSealing(protection: SigningKeyProtection(current: new, previous: [old]))
            #expect(try await after.resealAll(in: store, batchSize: 1) == (2, 1), "\(name)")
            let newOnly = FactorSecretSealing(protection: SigningKeyProtection(current: new))
            let factors = try await store.factors(userID: "u")
            for factor in factors where factor.id != "f-lost" {
                #expect(factor.secret.prefix(4) == Data("LKF1".utf8), "\(name)")
                #expect(newOnly.open(factor.secret, userID: "u", factorID: factor.id) == secret, "\(name)")
            }
            #expect(try await after.resealAll(in: store, batchSize: 10) == (0, 1), "\(name)")
        }
    }
}
