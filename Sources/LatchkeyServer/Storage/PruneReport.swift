/// How many rows one prune deleted, table by table.
public struct PruneReport: Sendable, Equatable {
    /// Single-use values (`jti`s).
    public var singleUse: Int
    /// Server-issued nonces.
    public var nonces: Int
    /// Easy Login requests.
    public var pendingAuthorizations: Int
    /// Easy Login authorization codes.
    public var authorizationCodes: Int
    /// Sessions.
    public var sessions: Int
    /// Refresh tokens of the deleted sessions.
    public var refreshTokens: Int
    /// Audit events.
    public var auditEvents: Int

    /// A report; every count defaults to zero.
    public init(
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
        [singleUse, nonces, pendingAuthorizations, authorizationCodes, sessions, refreshTokens, auditEvents]
    }

    /// Rows deleted in all.
    public var total: Int { counts.reduce(0, +) }

    /// Whether some table gave up `limit` rows, so more may be waiting: call `prune` again.
    /// - Parameter limit: the limit the prune was called with.
    /// - Returns: `true` when any count reached it.
    public func reachedLimit(_ limit: Int) -> Bool { counts.contains { $0 >= limit } }

    /// Adds the counts of `other` to these.
    /// - Parameter other: the report of a later call.
    public mutating func add(_ other: PruneReport) {
        singleUse += other.singleUse
        nonces += other.nonces
        pendingAuthorizations += other.pendingAuthorizations
        authorizationCodes += other.authorizationCodes
        sessions += other.sessions
        refreshTokens += other.refreshTokens
        auditEvents += other.auditEvents
    }
}
