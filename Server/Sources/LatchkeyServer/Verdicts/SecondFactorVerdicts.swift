import Foundation

/// What a store reads about a code sent to a second-factor challenge (`attemptFactorChallenge`).
package struct FactorAttemptFacts: Sendable, Equatable {
    /// The challenge was passed already (or given up on).
    package var spent = false
    /// It expired.
    package var expired = false
    /// Wrong codes it took so far.
    package var attempts = 0
    /// The user is disabled or gone, or (a step-up) its session ended.
    package var ended = false
    /// Until when the user's attempts wait, if they do.
    package var lockedUntil: Date?
    /// The user's wrong codes in a row so far (any challenge, any node).
    package var failuresInARow = 0
    /// The code matched a factor of the user at a step newer than its last accepted one, or was
    /// one of the user's unused recovery codes.
    package var proofAccepted = false

    /// Creates facts.
    package init(
        spent: Bool = false, expired: Bool = false, attempts: Int = 0, ended: Bool = false, lockedUntil: Date? = nil,
        failuresInARow: Int = 0, proofAccepted: Bool = false
    ) {
        self.spent = spent
        self.expired = expired
        self.attempts = attempts
        self.ended = ended
        self.lockedUntil = lockedUntil
        self.failuresInARow = failuresInARow
        self.proofAccepted = proofAccepted
    }
}

/// What happens to a code sent to a challenge.
package enum FactorAttemptVerdict: Sendable, Equatable {
    /// Accepted: the challenge is spent, the user's failures reset, its action carried out.
    case pass
    /// The challenge is no more (spent, expired, out of attempts): nothing is counted.
    case refuseInvalid
    /// The user or the session went away: the challenge is spent, nothing else changes.
    case refuseEnded
    /// The user's attempts wait: nothing is counted, and the code was not even looked at.
    case refuseLocked(until: Date)
    /// Wrong: the challenge and the user each count one more; the challenge dies when `killsChallenge`,
    /// and the user's attempts wait until `locksUntil` when it is set.
    case fail(killsChallenge: Bool, locksUntil: Date?)
}

extension Verdicts {
    /// The longest a user's attempts wait after wrong codes.
    package static let longestFactorLockout: TimeInterval = 3600

    /// How long a user's attempts wait after `failures` wrong codes in a row, given that
    /// `maximum` of them start the wait: 30 s, then doubling with each further wrong code, up to
    /// an hour. Long enough that guessing a 6-digit code (1 in 10⁶ per try, a few codes valid at
    /// once) takes years; short enough that a person who mistyped is back within minutes.
    package static func factorLockout(failures: Int, maximum: Int) -> TimeInterval? {
        guard failures >= maximum else { return nil }
        let doublings = min(failures - maximum, 7)
        return min(30 * Double(1 << doublings), longestFactorLockout)
    }

    /// Judges a code sent to a challenge. In order: a challenge that is no more counts nothing
    /// (an attacker gains no attempts from it, a person loses none); then a user or session that
    /// went away; then the user's wait, before the code is looked at; then the code.
    package static func factorAttempt(
        _ facts: FactorAttemptFacts, maximumAttempts: Int, now: Date
    ) -> FactorAttemptVerdict {
        if facts.spent || facts.expired || facts.attempts >= maximumAttempts { return .refuseInvalid }
        if facts.ended { return .refuseEnded }
        if let until = facts.lockedUntil, until > now { return .refuseLocked(until: until) }
        if facts.proofAccepted { return .pass }
        let failures = facts.failuresInARow + 1
        return .fail(
            killsChallenge: facts.attempts + 1 >= maximumAttempts,
            locksUntil: factorLockout(failures: failures, maximum: maximumAttempts).map { now.addingTimeInterval($0) })
    }

    /// Whether a sign-in (or a link that opens a session) opens its session or Easy Login code at
    /// once, or holds it back for the second factor. A link proven by a session that proved a
    /// second factor opens with that factor (the same person, proven again); otherwise the session
    /// is held back exactly when the user has an active factor. The one rule every path that opens
    /// a session obeys (classic, Limited Login, Easy Login, Apple, a guest's upgrade, a business
    /// join), on every backend: PostgreSQL's one-statement sign-in states it in SQL, and the
    /// contract suite runs it both ways.
    package static func sessionOpening(activeFactors: Int, proven: SecondFactorKind? = nil) -> SessionOpening {
        if let proven { return .open(secondFactor: proven) }
        return activeFactors > 0 ? .hold : .open(secondFactor: nil)
    }
}

/// What `Verdicts.sessionOpening` decides.
package enum SessionOpening: Sendable, Equatable {
    /// The session (or code) opens, with this second factor.
    case open(secondFactor: SecondFactorKind?)
    /// It is held back: the challenge is stored instead.
    case hold
}
