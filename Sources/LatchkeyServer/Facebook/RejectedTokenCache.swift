import Crypto
import Foundation
import HTTPTypes
import LatchkeyAPI
import Synchronization

/// Facebook's recent "no" about classic tokens, so a replayed made-up or dead token costs no
/// Graph call: a token Facebook called invalid, expired, revoked or another app's stays so (tokens
/// never come back to life). Kept by SHA-256 of the token, never the token; bounded in count and
/// time (`LATCHKEY_FACEBOOK_REJECTION_TTL`, 60 s by default).
final class RejectedTokenCache: Sendable {
    private struct Entry: Sendable {
        let error: APIError
        let until: Date
    }

    private let entries = Mutex<[Data: Entry]>([:])
    private let lifetime: TimeInterval
    private let maximumEntries: Int

    init(lifetime: TimeInterval, maximumEntries: Int = 10_000) {
        self.lifetime = lifetime
        self.maximumEntries = maximumEntries
    }

    /// The answer Facebook gave for `token` within the lifetime, if any.
    func rejection(of token: String, now: Date) -> APIError? {
        guard lifetime > 0 else { return nil }
        let key = Self.key(token)
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            if entry.until <= now {
                entries[key] = nil
                return nil
            }
            return entry.error
        }
    }

    /// The verdicts that are final for a token whatever the request: a checkpoint can be cleared
    /// and a permission error depends on the fields asked for, so those are asked again.
    static let finalVerdicts: Set<ErrorCode> = [
        .facebookTokenInvalid, .facebookTokenExpired, .facebookPasswordChanged, .facebookAppRemoved,
        .facebookLoggedOut, .facebookWrongApp, .facebookNotUserToken,
    ]

    /// Remembers `error` for `token` when it is Facebook's final verdict on the token itself, never
    /// Facebook's trouble or ours.
    func remember(_ error: APIError, for token: String, now: Date) {
        guard lifetime > 0, error.status == .unauthorized, Self.finalVerdicts.contains(error.code) else { return }
        let key = Self.key(token)
        // The cause stays out: the cached answer is what the client gets, and the log has the first.
        let answer = APIError(error.status, error.code, error.message)
        entries.withLock { entries in
            if entries.count >= maximumEntries {
                entries = entries.filter { $0.value.until > now }
                if entries.count >= maximumEntries { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = Entry(error: answer, until: now.addingTimeInterval(lifetime))
        }
    }

    private static func key(_ token: String) -> Data { Data(SHA256.hash(data: Data(token.utf8))) }
}
