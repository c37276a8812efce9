import Foundation

/// What a store read about a presented refresh token that it knows (an unknown token has no
/// facts: its verdict is `.invalid`).
package struct RefreshFacts: Sendable, Hashable {
    /// The token's session was revoked (signed out, reused, its user disabled).
    package var sessionEnded: Bool
    /// The token was spent by an earlier rotation.
    package var spent: Bool
    /// The token's own expiry has passed.
    package var expired: Bool
    /// The session's user is disabled.
    package var userDisabled: Bool
    /// The deployment allows retries at all (`LATCHKEY_REFRESH_RETRY_WINDOW` is not 0).
    package var retriesAllowed: Bool
    /// For a spent token: it was spent within the retry window (`Verdicts.spentWithinRetryWindow`).
    package var spentWithinRetryWindow: Bool
    /// For a spent token: its recorded successor is one of the successors the server derived from
    /// the presented token (only a holder of the server's keys can name it).
    package var successorNamed: Bool
    /// For a spent token: that successor is itself unspent and unexpired.
    package var successorLive: Bool
    /// For a spent token: that successor has been spent in turn (a later rotation used it).
    package var successorSpent: Bool
    /// The token itself was handed out again by a late retry (`RefreshVerdict.retryLate`).
    package var reissued: Bool

    /// Creates the facts; each defaults to a current token of a live session.
    package init(
        sessionEnded: Bool = false, spent: Bool = false, expired: Bool = false, userDisabled: Bool = false,
        retriesAllowed: Bool = false, spentWithinRetryWindow: Bool = false, successorNamed: Bool = false,
        successorLive: Bool = false, successorSpent: Bool = false, reissued: Bool = false
    ) {
        self.reissued = reissued
        self.sessionEnded = sessionEnded
        self.spent = spent
        self.expired = expired
        self.userDisabled = userDisabled
        self.retriesAllowed = retriesAllowed
        self.spentWithinRetryWindow = spentWithinRetryWindow
        self.successorNamed = successorNamed
        self.successorLive = successorLive
        self.successorSpent = successorSpent
    }
}

extension RefreshFacts {
    /// The facts of a spent token that the store computes the same way on every backend: retries
    /// allowed, spent within the window, its stored `successor` one of the server's `candidates`.
    /// The store then reads the successor's own row (`successorLive`, `successorSpent`).
    package mutating func noteSpend(
        at spentAt: Date, successor: Data, now: Date, window: TimeInterval, candidates: [Data]
    ) {
        retriesAllowed = window > 0
        spentWithinRetryWindow = Verdicts.spentWithinRetryWindow(spentAt: spentAt, now: now, window: window)
        successorNamed = candidates.contains(successor)
    }
}

/// What presenting a refresh token does (`Verdicts.refresh`).
package enum RefreshVerdict: Sendable, Hashable {
    /// Nothing changes, and the token is refused: unknown, expired, or of an ended session.
    case invalid
    /// The token is spent, its successor stored, and the session renewed to the successor's expiry.
    case rotate
    /// Nothing changes: the app lost the answer to its refresh (or never saved it) and asks
    /// again; it gets the successor already issued.
    case retry
    /// The same as `.retry`, long after the rotation: the successor is answered again and marked
    /// reissued, so that it gets no late retry of its own.
    case retryLate
    /// Nothing changes, and the token is refused: a concurrent refresh of the same token (another
    /// process of the app, an extension) got the successor and has used it moments ago. The
    /// session lives on in the newer token.
    case refuseSuperseded
    /// The session is revoked: a spent token came back, so someone holds a copy
    /// (RFC 6819 §5.2.2.3).
    case revokeReused
    /// The session is revoked: its user is disabled (a guard for rows changed outside the store;
    /// disabling a user revokes their sessions already).
    case revokeDisabled

    /// The outcome the store reports for this verdict.
    /// - Parameters:
    ///   - successor: the successor a `.retry` answers with.
    ///   - anonymous: whether the session's user is a guest, for the new access token's claim.
    ///   - assurance: how the session was authenticated, for the new access token's `amr` and `aal`.
    package func outcome(
        sessionID: String, userID: String, successor: Data?, anonymous: Bool = false,
        assurance: SessionAssurance = .unrecorded
    ) -> RefreshOutcome {
        switch self {
        case .invalid: .invalid
        case .rotate: .rotated(sessionID: sessionID, userID: userID, anonymous: anonymous, assurance: assurance)
        case .retry, .retryLate:
            successor.map {
                .retried(
                    sessionID: sessionID, userID: userID, successorHash: $0, anonymous: anonymous,
                    assurance: assurance)
            } ?? .invalid
        case .refuseSuperseded: .superseded(sessionID: sessionID)
        case .revokeReused: .reused(sessionID: sessionID)
        case .revokeDisabled: .userDisabled(sessionID: sessionID)
        }
    }
}

extension Verdicts {
    /// What presenting a refresh token does, from what the store read (`nil`: an unknown token).
    ///
    /// An ended session answers nothing whatever its token. A spent token revokes the session
    /// (someone holds a copy, RFC 6819 §5.2.2.3) except in two cases, both only while retries are
    /// allowed, the successor it was rotated to is named and the user is not disabled:
    /// - the successor was never used: the app lost the answer or failed to save it, however
    ///   long ago (the "fail-to-save" rule), and gets that same successor again. After the window
    ///   this happens once per token chain: the successor handed out late is marked reissued, and
    ///   a reissued token presented late while its own successor is unused revokes. Two holders of
    ///   one session (the app and a thief with a copy) otherwise take turns forever, each getting
    ///   the other's successor; with the mark, the second turn ends the session;
    /// - the successor was used, but the token was spent within the retry window: a concurrent
    ///   refresh won the race and moved on, and this one is refused without ending the session.
    /// An expired spent token is judged the same way (a copy was made while it lived). An unspent
    /// one is refused once expired, revokes the session when its user is disabled, and otherwise
    /// rotates.
    package static func refresh(_ facts: RefreshFacts?) -> RefreshVerdict {
        guard let facts, !facts.sessionEnded else { return .invalid }
        if facts.spent {
            guard facts.retriesAllowed, facts.successorNamed, !facts.userDisabled else { return .revokeReused }
            if facts.successorLive {
                if facts.spentWithinRetryWindow { return .retry }
                return facts.reissued ? .revokeReused : .retryLate
            }
            if facts.successorSpent && facts.spentWithinRetryWindow { return .refuseSuperseded }
            return .revokeReused
        }
        if facts.expired { return .invalid }
        if facts.userDisabled { return .revokeDisabled }
        return .rotate
    }

    /// Whether a token spent at `spentAt` counts as spent moments ago at `now`: after
    /// `now - window`, and no later than `now + window`. Bounded on both sides because servers'
    /// clocks differ: one whose clock lags the server that spent the token must not stretch the
    /// window by its lag. A window of 0 is empty.
    package static func spentWithinRetryWindow(spentAt: Date, now: Date, window: TimeInterval) -> Bool {
        spentAt > now.addingTimeInterval(-window) && spentAt <= now.addingTimeInterval(window)
    }
}
