/// How many rows one prune deleted, table by table.
package struct PruneReport: Sendable, Equatable {
    /// Single-use values (`jti`s).
    package var singleUse: Int
    /// Server-issued nonces.
    package var nonces: Int
    /// Easy Login requests.
    package var pendingAuthorizations: Int
    /// Easy Login authorization codes.
    package var authorizationCodes: Int
    /// Sessions.
    package var sessions: Int
    /// Refresh tokens of the deleted sessions.
    package var refreshTokens: Int
    /// Audit events.
    package var auditEvents: Int
    /// Guests nobody used for `LATCHKEY_ANONYMOUS_USER_TTL` (their sessions went with them).
    package var guests: Int = 0
    /// Provider tokens of identities nobody has (their revocation queued).
    package var orphanProviderTokens: Int = 0
    /// Data-deletion requests finished (done or refused) longer ago than the audit log's
    /// retention: their status pages are gone with them.
    package var deletionRequests: Int = 0
    /// Second-factor challenges that expired.
    package var factorChallenges: Int = 0

    /// A report; every count defaults to zero.
    package init(
        singleUse: Int = 0, nonces: Int = 0, pendingAuthorizations: Int = 0, authorizationCodes: Int = 0,
        sessions: Int = 0, refreshTokens: Int = 0, auditEvents: Int = 0
    ) {
        self.singleUse = singleUse
        self.nonces = nonces
        self.pendingAuthorizations = pendingAuthorizations
        self.authorizationCodes = authorizationCodes
        self.sessions = sessions
        self.refreshTokens = refreshTokens
        self.auditEvents = auditEvents
    }

    /// Every count, in a fixed order.
    var counts: [Int] {
        [
            singleUse, nonces, pendingAuthorizations, authorizationCodes, sessions, refreshTokens, auditEvents, guests,
            orphanProviderTokens, deletionRequests, factorChallenges,
        ]
    }

    /// Rows deleted in all.
    package var total: Int { counts.reduce(0, +) }

    /// Whether some table gave up `limit` rows, so more may be waiting: call `prune` again.
    /// - Parameter limit: the limit the prune was called with.
    /// - Returns: `true` when any count reached it.
    package func reachedLimit(_ limit: Int) -> Bool { counts.contains { $0 >= limit } }

    /// Adds the counts of `other` to these.
    /// - Parameter other: the report of a later call.
    package mutating func add(_ other: PruneReport) {
        singleUse += other.singleUse
        nonces += other.nonces
        pendingAuthorizations += other.pendingAuthorizations
        authorizationCodes += other.authorizationCodes
        sessions += other.sessions
        refreshTokens += other.refreshTokens
        auditEvents += other.auditEvents
        guests += other.guests
        orphanProviderTokens += other.orphanProviderTokens
        deletionRequests += other.deletionRequests
        factorChallenges += other.factorChallenges
    }
}
