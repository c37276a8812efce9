import Foundation
import Synchronization

/// Access tokens whose signature and claims were already checked, until they expire.
///
/// An ES256 verification costs about 50 µs here (docs/performance.md), more than the whole rest
/// of `GET /v1/users/me`; an app calls its backend with the same token many times in its 15
/// minutes. Only what the signature proves is cached: whether the session is still active is
/// checked in the store on every request, so sign-out and revocation take effect at once.
final class VerifiedTokenCache: Sendable {
    private struct Entry {
        let claims: SessionTokens.AccessClaims
        let expiresAt: TimeInterval
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let capacity: Int

    init(capacity: Int = 50_000) { self.capacity = capacity }

    /// The claims of `token` if it was verified and has not expired at `now`.
    func claims(for token: String, now: Date) -> SessionTokens.AccessClaims? {
        entries.withLock { entries in
            guard let entry = entries[token] else { return nil }
            guard entry.expiresAt > now.timeIntervalSince1970 else {
                entries[token] = nil
                return nil
            }
            return entry.claims
        }
    }

    /// Remembers a verified token; when full, expired entries go first, then everything (the
    /// cache only saves work, so emptying it is always safe).
    func remember(_ token: String, claims: SessionTokens.AccessClaims, expiresAt: TimeInterval, now: Date) {
        entries.withLock { entries in
            if entries.count >= capacity {
                let current = now.timeIntervalSince1970
                entries = entries.filter { $0.value.expiresAt > current }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[token] = Entry(claims: claims, expiresAt: expiresAt)
        }
    }
}
