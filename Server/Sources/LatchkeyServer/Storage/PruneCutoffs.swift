import Foundation

/// What a prune may delete: for each kind of record, the date before which it is of no more use.
///
/// The rules live here, once, for every backend: a store only deletes what these dates tell it
/// to (`LatchkeyStore.prune`), and `init(now:configuration:)` is the server's policy.
package struct PruneCutoffs: Sendable, Equatable {
    /// Single-use values (Limited Login `jti`s) recorded until a date before this one.
    package var singleUseExpiredBefore: Date
    /// Server-issued nonces that expired before this.
    package var noncesExpiredBefore: Date
    /// Easy Login requests that expired before this.
    package var pendingAuthorizationsExpiredBefore: Date
    /// Easy Login authorization codes that expired before this.
    package var authorizationCodesExpiredBefore: Date
    /// Sessions revoked before this, or whose last refresh token expired before this; their
    /// refresh tokens, spent or not, go with them.
    package var sessionsEndedBefore: Date
    /// Audit events recorded before this; also finished data-deletion requests received before it.
    package var auditEventsBefore: Date
    /// Guests created before this, and not used since, are deleted (with their sessions).
    package var guestsUnusedBefore: Date
    /// A guest counts as used since `guestsUnusedBefore` while one of its live sessions expires
    /// after this (a session's expiry is its last sign-in or refresh plus the refresh-token
    /// lifetime, so this is `guestsUnusedBefore` plus that lifetime).
    package var guestSessionsExpiringAfter: Date
    /// A provider's refresh token stored before this whose identity no user has (the sign-in or
    /// link after its code exchange was refused, or never written) is revoked at the provider and
    /// forgotten: the person has no account here, so the app keeps no authorization of theirs.
    package var orphanProviderTokensBefore: Date = .distantPast
    /// Second-factor challenges that expired before this (passed or not: an expired one is refused
    /// as an unknown one is, so deleting it changes no answer).
    package var factorChallengesExpiredBefore: Date = .distantPast

    /// How long a provider token may wait for its identity, seconds: the sign-in is written
    /// milliseconds after the token.
    package static let orphanProviderTokenGrace: TimeInterval = 3600

    /// How long an expired Easy Login request is kept, seconds: a person who comes back from
    /// Facebook's dialog this late still reaches the app, with an error, rather than a dead end.
    package static let pendingAuthorizationGrace: TimeInterval = 3600

    /// How long an authorization code is kept after it expires, seconds: a second redemption within
    /// this time is recognised as a replay and ends the session the first one opened.
    package static let authorizationCodeGrace: TimeInterval = 3600

    /// Cutoffs given date by date.
    /// - Parameters:
    ///   - singleUseExpiredBefore: single-use values expired before this are deleted.
    ///   - noncesExpiredBefore: nonces expired before this are deleted.
    ///   - pendingAuthorizationsExpiredBefore: Easy Login requests expired before this are deleted.
    ///   - authorizationCodesExpiredBefore: authorization codes expired before this are deleted.
    ///   - sessionsEndedBefore: sessions revoked or expired before this are deleted.
    ///   - auditEventsBefore: audit events older than this are deleted.
    ///   - guestsUnusedBefore: guests created and last used before this are deleted.
    ///   - guestSessionsExpiringAfter: a guest's live session expiring after this marks it used.
    package init(
        singleUseExpiredBefore: Date, noncesExpiredBefore: Date, pendingAuthorizationsExpiredBefore: Date,
        authorizationCodesExpiredBefore: Date, sessionsEndedBefore: Date, auditEventsBefore: Date,
        guestsUnusedBefore: Date = .distantPast, guestSessionsExpiringAfter: Date = .distantPast
    ) {
        self.guestsUnusedBefore = guestsUnusedBefore
        self.guestSessionsExpiringAfter = guestSessionsExpiringAfter
        self.singleUseExpiredBefore = singleUseExpiredBefore
        self.noncesExpiredBefore = noncesExpiredBefore
        self.pendingAuthorizationsExpiredBefore = pendingAuthorizationsExpiredBefore
        self.authorizationCodesExpiredBefore = authorizationCodesExpiredBefore
        self.sessionsEndedBefore = sessionsEndedBefore
        self.auditEventsBefore = auditEventsBefore
    }

    /// The server's policy at `now`.
    ///
    /// - A single-use value or a nonce is useless once expired: the token carrying it is refused
    ///   as expired before the store is asked.
    /// - An ended session is kept one access-token lifetime longer: a session expires with its last
    ///   refresh token, and when access tokens live longer than refresh tokens, the last one issued
    ///   may still be valid; deleting its session would end it early. Until then, spent refresh
    ///   tokens stay with their session, so presenting one still revokes it (reuse detection).
    /// - Audit events are kept `configuration.maintenance.auditRetention`.
    /// - A guest is kept `LATCHKEY_ANONYMOUS_USER_TTL` after its last use: its creation, or a
    ///   sign-in or refresh of one of its sessions.
    /// - A provider token whose identity nobody has is revoked an hour after it was stored.
    /// - Parameters:
    ///   - now: the current time, from the configuration's clock.
    ///   - configuration: the lifetimes and the audit retention.
    package init(now: Date, configuration: ServerConfiguration) {
        self.init(
            singleUseExpiredBefore: now, noncesExpiredBefore: now,
            pendingAuthorizationsExpiredBefore: now.addingTimeInterval(-Self.pendingAuthorizationGrace),
            authorizationCodesExpiredBefore: now.addingTimeInterval(-Self.authorizationCodeGrace),
            sessionsEndedBefore: now.addingTimeInterval(-configuration.sessions.accessTokenLifetime),
            auditEventsBefore: now.addingTimeInterval(-configuration.maintenance.auditRetention),
            guestsUnusedBefore: now.addingTimeInterval(-configuration.identities.anonymousUserLifetime),
            guestSessionsExpiringAfter: now.addingTimeInterval(
                configuration.sessions.refreshTokenLifetime - configuration.identities.anonymousUserLifetime))
        orphanProviderTokensBefore = now.addingTimeInterval(-Self.orphanProviderTokenGrace)
        factorChallengesExpiredBefore = now
    }
}
