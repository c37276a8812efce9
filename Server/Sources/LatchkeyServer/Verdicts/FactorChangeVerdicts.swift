import Foundation

/// What is known when a session asks to change the person's second factors: add, activate or
/// remove a factor, or make new recovery codes (`Verdicts.factorChange`).
package struct FactorChangeFacts: Sendable, Hashable {
    /// The session exists, is live and not revoked, and its user is neither gone nor disabled.
    package var sessionActive = true
    /// The user is a guest: it has no way in to protect, and nothing to prove recently.
    package var anonymous = false
    /// The user has an active factor.
    package var activeFactor = false
    /// Seconds since the session last proved any credential: its sign-in, a re-proven identity,
    /// or a step-up, whichever is later.
    package var secondsSinceProof: TimeInterval = 0
    /// Seconds since the session last proved a second factor (a step-up, or a sign-in that passed
    /// one); `nil` when it never did. A re-proven identity does not count: it proves the first
    /// factor again, not the second.
    package var secondsSinceFactorProof: TimeInterval?
    /// `LATCHKEY_REAUTHENTICATION_WINDOW`.
    package var window: TimeInterval = 600

    /// Creates the facts; each defaults to what lets a change through for a person without factors.
    package init(
        sessionActive: Bool = true, anonymous: Bool = false, activeFactor: Bool = false,
        secondsSinceProof: TimeInterval = 0, secondsSinceFactorProof: TimeInterval? = nil, window: TimeInterval = 600
    ) {
        self.sessionActive = sessionActive
        self.anonymous = anonymous
        self.activeFactor = activeFactor
        self.secondsSinceProof = secondsSinceProof
        self.secondsSinceFactorProof = secondsSinceFactorProof
        self.window = window
    }
}

/// What a change of a second factor gets.
package enum FactorChangeVerdict: Sendable, Equatable {
    /// It goes ahead.
    case allow
    /// The session ended: `401 session_revoked` (or the user's own refusal).
    case sessionEnded
    /// The session must sign in again: `403 reauthentication_required`.
    case reauthenticate
    /// The session must pass a step-up first: `403 second_factor_required` with a challenge.
    case stepUp
}

extension Verdicts {
    /// Whether a session may change the person's second factors. A factor is a way in: whoever
    /// adds one holds the account's every later sign-in, so a stolen session that signed in long
    /// ago must not plant the thief's authenticator (nor make recovery codes, nor remove the
    /// owner's). So, like every other change of a way in, it needs a recent proof; and once the
    /// person has an active factor, a recent proof of a factor: a session that passed one days ago
    /// and re-proves only its Facebook now (a stolen phone's session and token) proves nothing of
    /// the second factor.
    ///
    /// | session | guest | active factor | recent proof | recent factor proof | verdict |
    /// |---|---|---|---|---|---|
    /// | ended | any | any | any | any | `sessionEnded` |
    /// | live | yes | any | any | any | `reauthenticate` |
    /// | live | no | no | yes | any | `allow` |
    /// | live | no | no | no | any | `reauthenticate` |
    /// | live | no | yes | any | yes | `allow` |
    /// | live | no | yes | any | no, or none | `stepUp` |
    ///
    /// A passed step-up is a recent proof here (it proves the strongest way in), though not for
    /// deleting the account or changing identities, which ask for the first factor again.
    package static func factorChange(_ facts: FactorChangeFacts) -> FactorChangeVerdict {
        if !facts.sessionActive { return .sessionEnded }
        // A guest has no way in a factor could guard: making one for it would only lock it out.
        if facts.anonymous { return .reauthenticate }
        if facts.activeFactor {
            guard let factorAge = facts.secondsSinceFactorProof, factorAge <= facts.window else { return .stepUp }
            return .allow
        }
        return facts.secondsSinceProof <= facts.window ? .allow : .reauthenticate
    }
}

/// What a store reads about the two accounts' second factors when a link ticket's merge goes
/// through (`Verdicts.mergeFactors`).
package struct MergeFactorFacts: Sendable, Hashable {
    /// The merged (source) account has an active factor.
    package var sourceHasFactor = false
    /// The account that stays (target) has an active factor.
    package var targetHasFactor = false
    /// The caller's (target's) session proved a second factor (`aal` 2).
    package var targetSessionProven = false
    /// The caller sealed every one of the source's active factors for the target, from their
    /// secrets as stored now (a factor added, removed or resealed since makes this false).
    package var sourceFactorsResealed = false

    /// Creates the facts.
    package init(
        sourceHasFactor: Bool = false, targetHasFactor: Bool = false, targetSessionProven: Bool = false,
        sourceFactorsResealed: Bool = false
    ) {
        self.sourceHasFactor = sourceHasFactor
        self.targetHasFactor = targetHasFactor
        self.targetSessionProven = targetSessionProven
        self.sourceFactorsResealed = sourceFactorsResealed
    }
}

/// What a merge does with the source account's second factors.
package enum MergeFactorVerdict: Sendable, Equatable {
    /// The source has none to keep: its pending factors and any codes go with it.
    case dropSource
    /// The source's active factors and unused recovery codes move to the target (the factor cap
    /// does not apply); its pending factors go.
    case moveSource
    /// The target's session must pass a step-up first: nothing is written.
    case stepUp
    /// The source's factors changed since the caller sealed them: nothing is written; read again.
    case stale
}

extension Verdicts {
    /// What a merge does with second factors, so that no identity signs in with fewer factors
    /// after it than before: the merged account's identities arrive protected by the factors they
    /// needed. When only the source has them, they move; when both have them, the target's protect
    /// the account and the source's go, but only a session that proved the target's may decide
    /// that (else a thief of an aal-1 target session could shed the source's factor).
    ///
    /// | source factor | target factor | target aal 2 | resealed | verdict |
    /// |---|---|---|---|---|
    /// | no | any | any | any | `dropSource` |
    /// | yes | no | any | yes | `moveSource` |
    /// | yes | no | any | no | `stale` |
    /// | yes | yes | yes | any | `dropSource` |
    /// | yes | yes | no | any | `stepUp` |
    package static func mergeFactors(_ facts: MergeFactorFacts) -> MergeFactorVerdict {
        guard facts.sourceHasFactor else { return .dropSource }
        if facts.targetHasFactor { return facts.targetSessionProven ? .dropSource : .stepUp }
        return facts.sourceFactorsResealed ? .moveSource : .stale
    }
}
