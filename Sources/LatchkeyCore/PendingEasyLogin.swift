import Foundation

/// An Easy Login attempt waiting for its redirect, as the credential store keeps it: when the
/// browser is Safari (or any browser outside the app) the system may kill the app while the person
/// signs in, and the redirect then launches it afresh. The state and the PKCE verifier must survive
/// that, or the code the redirect carries cannot be redeemed (RFC 7636 binds it to the verifier).
public struct PendingEasyLogin: Sendable, Equatable, Codable {
    /// The attempt: URL, redirect URI, client id, state and PKCE verifier.
    public let request: EasyLoginRequest
    /// The server the attempt was started against; a store shared by two configurations never
    /// finishes one server's attempt with another.
    public let serverURL: URL
    /// When the attempt started; the SDK forgets attempts older than ``lifetime``.
    public let startedAt: Date

    /// How long an attempt is kept: longer than the server's Easy Login request lifetime (10
    /// minutes by default), so the server, not the SDK, decides when a slow sign-in is too late;
    /// bounded so a verifier does not linger for days.
    public static let lifetime: TimeInterval = 3600

    /// Creates a pending attempt.
    public init(request: EasyLoginRequest, serverURL: URL, startedAt: Date) {
        self.request = request
        self.serverURL = serverURL
        self.startedAt = startedAt
    }

    /// Whether the attempt may still be finished at `now` against `server`.
    func isUsable(at now: Date, server: URL) -> Bool {
        serverURL == server && now >= startedAt.addingTimeInterval(-60)
            && now < startedAt.addingTimeInterval(Self.lifetime)
    }
}

extension PendingEasyLogin: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The request's redacted form and the start time; never the state or the verifier.
    public var description: String { "PendingEasyLogin(\(request), startedAt: \(startedAt))" }
    /// Same as `description`.
    public var debugDescription: String { description }
    /// What `dump` and debuggers show: the secrets left out.
    public var customMirror: Mirror {
        Mirror(self, children: ["request": request, "serverURL": serverURL, "startedAt": startedAt])
    }
}

/// A credential store that also keeps the pending Easy Login attempt, beside the session and as
/// privately (the Keychain, a 0600 file, memory): all of the SDK's stores are. A store of the app's
/// own that is not one keeps nothing, and Easy Login then works as long as the app stays alive; a
/// redirect after a relaunch fails with `invalid_response`.
public protocol PendingEasyLoginStore: CredentialStore {
    /// The Easy Login attempt waiting for its redirect, if one is kept.
    func loadPendingEasyLogin() async throws -> PendingEasyLogin?
    /// Keeps the attempt, replacing any other, so a relaunched app can finish it.
    func savePendingEasyLogin(_ login: PendingEasyLogin) async throws
    /// Forgets the attempt (finished, cancelled or superseded).
    func clearPendingEasyLogin() async throws
}
