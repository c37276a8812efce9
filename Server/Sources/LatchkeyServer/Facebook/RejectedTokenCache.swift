import Crypto
import Foundation
import HTTPTypes
import LatchkeyAPI

/// Facebook's recent "no" about classic tokens, so a replayed made-up or dead token costs no
/// Graph call: a token Facebook called invalid, expired, revoked or another app's stays so (tokens
/// never come back to life). Kept by SHA-256 of the token, never the token; bounded in count and
/// time (`LATCHKEY_FACEBOOK_REJECTION_TTL`, 60 s by default).
final class RejectedTokenCache: Sendable {
    private let verdicts: ExpiringTable<Data, APIError>
    private let lifetime: TimeInterval

    init(lifetime: TimeInterval, maximumEntries: Int = 10_000) {
        self.lifetime = lifetime
        verdicts = ExpiringTable(capacity: maximumEntries)
    }

    /// The answer Facebook gave for `token` within the lifetime it was remembered for, if any.
    func rejection(of token: String, now: Date) -> APIError? {
        verdicts.update(Self.key(token), now: now.timeIntervalSince1970) { $0?.value }
    }

    /// The verdicts that are final for a token whatever the request: a checkpoint can be cleared
    /// and a permission error depends on the fields asked for, so those are asked again.
    static let finalVerdicts: Set<ErrorCode> = [
        .facebookTokenInvalid, .facebookTokenExpired, .facebookPasswordChanged, .facebookAppRemoved,
        .facebookLoggedOut, .facebookWrongApp, .facebookNotUserToken,
    ]

    /// Remembers `error` for `token` when it is Facebook's final verdict on the token itself, never
    /// Facebook's trouble or ours.
    /// - Parameter atLeast: a longer lifetime to use instead, as when the app's Graph usage is
    ///   high (`FacebookUsageMonitor`): then even a TTL of 0 remembers.
    func remember(_ error: APIError, for token: String, now: Date, atLeast: TimeInterval = 0) {
        let lifetime = max(self.lifetime, atLeast)
        guard lifetime > 0, error.status == .unauthorized, Self.finalVerdicts.contains(error.code) else { return }
        // The cause stays out: the cached answer is what the client gets, and the log has the first.
        let answer = APIError(error.status, error.code, error.message)
        let time = now.timeIntervalSince1970
        verdicts.update(Self.key(token), now: time) { $0 = .init(value: answer, expires: time + lifetime) }
    }

    private static func key(_ token: String) -> Data { Data(SHA256.hash(data: Data(token.utf8))) }
}
