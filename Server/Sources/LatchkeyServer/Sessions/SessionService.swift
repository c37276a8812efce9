import Foundation
import HTTPTypes
import LatchkeyAPI

/// The sessions concept: a refresh token's rotation (with retries and reuse detection) and the
/// ends of sessions. The HTTP layer reads requests and encodes answers; what a refresh does is
/// decided here and in `Verdicts.refresh`.
struct SessionService: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore
    let tokens: SessionTokens
    let limits: AbuseLimits

    static let invalidRefreshToken = APIError(
        .badRequest, .refreshTokenInvalid, "The refresh token is unknown, expired or revoked.")

    /// `grant_type=refresh_token` (RFC 6749 §6): rotates `presented` and answers a new access
    /// token with its successor.
    func refresh(_ presented: String) async throws -> SessionBody {
        let hash = SessionTokens.hash(presented)
        // The family first, so its limit is checked before anything is spent: limiting after the
        // rotation would throw away the new token, and the app's retry with the old one would
        // then read as reuse and end the session.
        guard let family = try await store.refreshTokenFamily(hash: hash) else { throw Self.invalidRefreshToken }
        // A spent token is never limited: its rotation revokes the session, and a thief keeping the
        // family's budget full must not keep the app's reuse from being noticed.
        // An ended session's token is refused as such, not as a rate limit.
        guard !family.ended else { throw Self.invalidRefreshToken }
        if !family.spent { try await limits.enforce(limits.rules.refreshPerSession, key: family.sessionID) }
        let now = configuration.clock()
        // The successor is derived from the token, not drawn at random: an app that lost the
        // answer (or failed to save it) and sends the same token again while the successor is
        // unused is given the same successor, on any server, rather than having its session
        // revoked as a reuse.
        let successors = tokens.keys.current.refreshSuccessors(of: presented)
        let issued:
            (
                sessionID: String, userID: String, refreshToken: String, anonymous: Bool, assurance: SessionAssurance
            )
        switch try await store.rotateRefreshToken(
            hash: hash, newHash: successors[0].hash, now: now,
            newExpiresAt: now.addingTimeInterval(configuration.sessions.refreshTokenLifetime),
            retryWindow: configuration.sessions.refreshRetryWindow, retryCandidates: successors.map(\.hash))
        {
        case .rotated(let sessionID, let userID, let anonymous, let assurance):
            issued = (sessionID, userID, successors[0].token, anonymous, assurance)
        case .retried(let sessionID, let userID, let successorHash, let anonymous, let assurance):
            // A retry spends nothing, so limiting it here loses no token and hides no reuse; it
            // keeps a spent token from minting access tokens without end inside the window.
            try await limits.enforce(limits.rules.refreshPerSession, key: sessionID)
            // The store matched one of the candidates; a new access token goes with it.
            guard let successor = successors.first(where: { $0.hash == successorHash }) else {
                throw Self.invalidRefreshToken
            }
            issued = (sessionID, userID, successor.token, anonymous, assurance)
        case .superseded:
            throw APIError(
                .badRequest, .refreshTokenSuperseded,
                "A concurrent refresh used this token's successor moments ago; the session continues with that newer token."
            )
        case .reused:
            // RFC 6749 §5.2: a bad grant is 400 (401 is for client authentication).
            throw APIError(
                .badRequest, .refreshTokenReused, "This refresh token was already used; the session has been revoked."
            )
        case .invalid:
            throw Self.invalidRefreshToken
        case .userDisabled:
            throw APIError(.badRequest, .userDisabled, "This account is disabled.")
        }
        return try tokens.body(
            userID: issued.userID, sessionID: issued.sessionID, refreshToken: issued.refreshToken,
            anonymous: issued.anonymous, assurance: issued.assurance, now: now)
    }

    /// Ends the session `claims` belong to (sign-out).
    func end(_ claims: SessionTokens.AccessClaims) async throws {
        try await store.endSession(
            id: claims.sessionID, userID: claims.userID, now: configuration.clock(), signOut: true)
    }

    /// The most sessions `GET /v1/users/me/sessions` lists: far more than one person signs in
    /// from, and a bound on the answer.
    static let listLimit = 100

    /// `GET /v1/users/me/sessions`: the caller's active sessions, newest first, theirs marked.
    func list(_ claims: SessionTokens.AccessClaims) async throws -> ActiveSessionsBody {
        let sessions = try await store.sessions(
            userID: claims.userID, now: configuration.clock(), limit: Self.listLimit)
        return ActiveSessionsBody(
            sessions: sessions.map { session in
                ActiveSessionBody(
                    id: session.id, createdAt: Int(session.createdAt.timeIntervalSince1970),
                    lastRefreshedAt: session.refreshedAt.map { Int($0.timeIntervalSince1970) },
                    expiresAt: Int(session.expiresAt.timeIntervalSince1970), method: session.method?.rawValue,
                    provider: session.provider, client: ClientBody(session.client),
                    current: session.id == claims.sessionID)
            })
    }

    /// `DELETE /v1/users/me/sessions/{id}`: ends one of the caller's sessions (their own included,
    /// as a sign-out). Another user's session, an ended one or an unknown id is the same 404, so
    /// the answer tells nothing about sessions that are not the caller's.
    func end(sessionID: String, _ claims: SessionTokens.AccessClaims) async throws {
        guard
            try await store.endSession(
                id: sessionID, userID: claims.userID, now: configuration.clock(),
                signOut: sessionID == claims.sessionID)
        else { throw APIError(.notFound, .notFound, "No active session of yours has this id.") }
    }

    /// Ends every session of the user `claims` belong to; how many were active.
    func endAll(_ claims: SessionTokens.AccessClaims) async throws -> Int {
        try await store.revokeSessions(userID: claims.userID, now: configuration.clock(), by: .user)
    }
}
