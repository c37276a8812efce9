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
    /// For a spent token: it was spent within the retry window (`Verdicts.spentWithinRetryWindow`).
    package var spentWithinRetryWindow: Bool
    /// For a spent token: its recorded successor is one of the successors the server derived from
    /// the presented token (only a holder of the server's keys can name it).
    package var successorNamed: Bool
    /// For a spent token: that successor is itself unspent and unexpired.
    package var successorLive: Bool

    /// Creates the facts; each defaults to a current token of a live session.
    package init(
        sessionEnded: Bool = false, spent: Bool = false, expired: Bool = false, userDisabled: Bool = false,
        spentWithinRetryWindow: Bool = false, successorNamed: Bool = false, successorLive: Bool = false
    ) {
        self.sessionEnded = sessionEnded
        self.spent = spent
        self.expired = expired
        self.userDisabled = userDisabled
        self.spentWithinRetryWindow = spentWithinRetryWindow
        self.successorNamed = successorNamed
        self.successorLive = successorLive
    }
}

/// What presenting a refresh token does (`Verdicts.refresh`).
package enum RefreshVerdict: Sendable, Hashable {
    /// Nothing changes, and the token is refused: unknown, expired, or of an ended session.
    case invalid
    /// The token is spent, its successor stored, and the session renewed to the successor's expiry.
    case rotate
    /// Nothing changes: the app lost the answer to its refresh and asks again; it gets the
    /// successor already issued.
    case retry
    /// The session is revoked: a spent token came back, so someone holds a copy
    /// (RFC 6819 §5.2.2.3).
    case revokeReused
    /// The session is revoked: its user is disabled (a guard for rows changed outside the store;
    /// disabling a user revokes their sessions already).
    case revokeDisabled

    /// The outcome the store reports for this verdict.
    /// - Parameter successor: the successor a `.retry` answers with.
    package func outcome(sessionID: String, userID: String, successor: Data?) -> RefreshOutcome {
        switch self {
        case .invalid: .invalid
        case .rotate: .rotated(sessionID: sessionID, userID: userID)
        case .retry:
            successor.map { .retried(sessionID: sessionID, userID: userID, successorHash: $0) } ?? .invalid
        case .revokeReused: .reused(sessionID: sessionID)
        case .revokeDisabled: .userDisabled(sessionID: sessionID)
        }
    }
}

extension Verdicts {
    /// What presenting a refresh token does, from what the store read (`nil`: an unknown token).
    ///
    /// An ended session answers nothing whatever its token. A spent token revokes the session,
    /// unless the app is retrying a refresh whose answer it lost: spent within the window, its
    /// successor named and still usable, and the user not disabled; an expired spent token still
    /// revokes (a copy was made while it lived). An unspent one is refused once expired, revokes
    /// the session when its user is disabled, and otherwise rotates.
    package static func refresh(_ facts: RefreshFacts?) -> RefreshVerdict {
        guard let facts, !facts.sessionEnded else { return .invalid }
        if facts.spent {
            let retry =
                facts.spentWithinRetryWindow && facts.successorNamed && facts.successorLive && !facts.userDisabled
            return retry ? .retry : .revokeReused
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
