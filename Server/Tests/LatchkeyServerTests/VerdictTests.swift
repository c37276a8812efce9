import Foundation
import LatchkeyAPI
import Testing

@testable import LatchkeyServer

/// Every verdict's truth table (`Verdicts`): each combination of facts that matters, and what it
/// decides. The storage contract checks that every backend applies these verdicts.
@Suite("Verdicts: every rule decided once")
struct VerdictTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    // MARK: Sign-in

    /// Every combination of the four facts: a replay first, then the nonce, then a disabled user,
    /// and last a new identity that must look for its business first.
    static let signInTable: [(SignInFacts, SignInConflict?)] = [
        (SignInFacts(), nil),
        (SignInFacts(jtiSpent: true), .replayed),
        (SignInFacts(nonceInvalid: true), .nonceInvalid),
        (SignInFacts(userDisabled: true), .userDisabled),
        (SignInFacts(jtiSpent: true, nonceInvalid: true), .replayed),
        (SignInFacts(jtiSpent: true, userDisabled: true), .replayed),
        (SignInFacts(nonceInvalid: true, userDisabled: true), .nonceInvalid),
        (SignInFacts(jtiSpent: true, nonceInvalid: true, userDisabled: true), .replayed),
        (SignInFacts(newIdentity: true), .newIdentity),
        (SignInFacts(jtiSpent: true, newIdentity: true), .replayed),
        (SignInFacts(nonceInvalid: true, newIdentity: true), .nonceInvalid),
        (SignInFacts(userDisabled: true, newIdentity: true), .userDisabled),
        (SignInFacts(jtiSpent: true, nonceInvalid: true, newIdentity: true), .replayed),
        (SignInFacts(jtiSpent: true, userDisabled: true, newIdentity: true), .replayed),
        (SignInFacts(nonceInvalid: true, userDisabled: true, newIdentity: true), .nonceInvalid),
        (SignInFacts(jtiSpent: true, nonceInvalid: true, userDisabled: true, newIdentity: true), .replayed),
    ]

    @Test("a sign-in's refusals, in their order", arguments: signInTable)
    func signIn(facts: SignInFacts, expected: SignInConflict?) {
        #expect(Verdicts.signIn(facts) == expected, "\(facts)")
    }

    @Test("the table lists every combination of sign-in facts")
    func signInTableIsComplete() {
        #expect(Set(Self.signInTable.map(\.0)).count == 16)
    }

    @Test("sign-in facts survive their names, the form PostgreSQL reports them in", arguments: signInTable)
    func signInFactNames(facts: SignInFacts, expected: SignInConflict?) {
        let names = facts.description.split(separator: ",")
        #expect(SignInFacts(names: names + ["changed"]) == facts)
    }

    // MARK: Refresh

    static let refreshTable: [(String, RefreshFacts?, RefreshVerdict)] = [
        ("unknown token", nil, .invalid),
        ("current token", RefreshFacts(), .rotate),
        ("ended session", RefreshFacts(sessionEnded: true), .invalid),
        ("ended session, spent token", RefreshFacts(sessionEnded: true, spent: true), .invalid),
        ("ended session, disabled user", RefreshFacts(sessionEnded: true, userDisabled: true), .invalid),
        ("expired token", RefreshFacts(expired: true), .invalid),
        ("expired token, disabled user", RefreshFacts(expired: true, userDisabled: true), .invalid),
        ("disabled user", RefreshFacts(userDisabled: true), .revokeDisabled),
        ("spent token, nothing else", RefreshFacts(spent: true), .revokeReused),
        ("spent and expired", RefreshFacts(spent: true, expired: true), .revokeReused),
        (
            "a retry",
            RefreshFacts(
                spent: true, retriesAllowed: true, spentWithinRetryWindow: true, successorNamed: true,
                successorLive: true),
            .retry
        ),
        (
            "a retry of an expired token",
            RefreshFacts(
                spent: true, expired: true, retriesAllowed: true, spentWithinRetryWindow: true, successorNamed: true,
                successorLive: true),
            .retry
        ),
        (
            "a retry for a disabled user",
            RefreshFacts(
                spent: true, userDisabled: true, retriesAllowed: true, spentWithinRetryWindow: true,
                successorNamed: true,
                successorLive: true),
            .revokeReused
        ),
        (
            // The fail-to-save rule: the answer was lost or never saved, however long ago.
            "a retry long after the window, the successor never used",
            RefreshFacts(
                spent: true, retriesAllowed: true, spentWithinRetryWindow: false, successorNamed: true,
                successorLive: true),
            .retryLate
        ),
        (
            // Handed out by a late retry itself: two holders taking turns. The second turn revokes.
            "a late retry of a token a late retry handed out",
            RefreshFacts(
                spent: true, retriesAllowed: true, spentWithinRetryWindow: false, successorNamed: true,
                successorLive: true, reissued: true),
            .revokeReused
        ),
        (
            "a retry within the window of a token a late retry handed out",
            RefreshFacts(
                spent: true, retriesAllowed: true, spentWithinRetryWindow: true, successorNamed: true,
                successorLive: true, reissued: true),
            .retry
        ),
        (
            "retries off",
            RefreshFacts(
                spent: true, retriesAllowed: false, spentWithinRetryWindow: true, successorNamed: true,
                successorLive: true),
            .revokeReused
        ),
        (
            "successor not named",
            RefreshFacts(
                spent: true, retriesAllowed: true, spentWithinRetryWindow: true, successorNamed: false,
                successorLive: true),
            .revokeReused
        ),
        (
            "successor used, within the window: a concurrent refresh won",
            RefreshFacts(
                spent: true, retriesAllowed: true, spentWithinRetryWindow: true, successorNamed: true,
                successorSpent: true),
            .refuseSuperseded
        ),
        (
            "successor used, within the window, retries off",
            RefreshFacts(
                spent: true, retriesAllowed: false, spentWithinRetryWindow: true, successorNamed: true,
                successorSpent: true),
            .revokeReused
        ),
        (
            "successor used, within the window, successor not named",
            RefreshFacts(
                spent: true, retriesAllowed: true, spentWithinRetryWindow: true, successorNamed: false,
                successorSpent: true),
            .revokeReused
        ),
        (
            "successor used, within the window, disabled user",
            RefreshFacts(
                spent: true, userDisabled: true, retriesAllowed: true, spentWithinRetryWindow: true,
                successorNamed: true,
                successorSpent: true),
            .revokeReused
        ),
        (
            "successor used, after the window",
            RefreshFacts(
                spent: true, retriesAllowed: true, spentWithinRetryWindow: false, successorNamed: true,
                successorSpent: true),
            .revokeReused
        ),
        (
            "successor expired unused",
            RefreshFacts(spent: true, retriesAllowed: true, spentWithinRetryWindow: true, successorNamed: true),
            .revokeReused
        ),
        (
            "a retry of an ended session",
            RefreshFacts(
                sessionEnded: true, spent: true, retriesAllowed: true, spentWithinRetryWindow: true,
                successorNamed: true,
                successorLive: true),
            .invalid
        ),
    ]

    @Test(
        "a refresh: rotate, retry while the successor is unused, superseded within the window, reuse revokes, expired, disabled",
        arguments: refreshTable)
    func refresh(name: String, facts: RefreshFacts?, expected: RefreshVerdict) {
        #expect(Verdicts.refresh(facts) == expected, "\(name)")
    }

    @Test("a refresh verdict's outcome")
    func refreshOutcome() {
        let successor = Data([7])
        #expect(
            RefreshVerdict.rotate.outcome(sessionID: "s", userID: "u", successor: nil)
                == .rotated(sessionID: "s", userID: "u"))
        #expect(
            RefreshVerdict.retry.outcome(sessionID: "s", userID: "u", successor: successor)
                == .retried(sessionID: "s", userID: "u", successorHash: successor))
        #expect(RefreshVerdict.retry.outcome(sessionID: "s", userID: "u", successor: nil) == .invalid)
        #expect(
            RefreshVerdict.revokeReused.outcome(sessionID: "s", userID: "u", successor: nil) == .reused(sessionID: "s"))
        #expect(
            RefreshVerdict.revokeDisabled.outcome(sessionID: "s", userID: "u", successor: nil)
                == .userDisabled(sessionID: "s"))
        #expect(RefreshVerdict.invalid.outcome(sessionID: "s", userID: "u", successor: nil) == .invalid)
        #expect(
            RefreshVerdict.retryLate.outcome(sessionID: "s", userID: "u", successor: successor)
                == .retried(sessionID: "s", userID: "u", successorHash: successor))
        #expect(
            RefreshVerdict.refuseSuperseded.outcome(sessionID: "s", userID: "u", successor: successor)
                == .superseded(sessionID: "s"))
    }

    /// (seconds between the spend and now, window, within)
    static let retryWindowTable: [(TimeInterval, TimeInterval, Bool)] = [
        (0, 30, true), (29, 30, true), (30, 30, false), (31, 30, false),
        // Spent "in the future" by a server whose clock runs ahead: within the window's width only.
        (-30, 30, true), (-31, 30, false),
        // A window of 0 is empty, even for a token spent this instant.
        (0, 0, false),
    ]

    @Test("the retry window is bounded on both sides", arguments: retryWindowTable)
    func retryWindow(age: TimeInterval, window: TimeInterval, within: Bool) {
        #expect(
            Verdicts.spentWithinRetryWindow(spentAt: Self.now - age, now: Self.now, window: window) == within,
            "spent \(age) s ago, window \(window) s")
    }

    // MARK: Authorization codes

    enum Presented: String, CaseIterable { case bound, otherClient, otherRedirect, wrongVerifier }

    /// (presented, expired, user disabled, spent, redeemed) → verdict
    static let codeTable: [(Presented, Bool, Bool, Bool, Bool, CodeVerdict)] = [
        (.bound, false, false, false, false, .redeem),
        (.otherClient, false, false, false, false, .refuse(.invalid)),
        (.otherRedirect, false, false, false, false, .refuse(.invalid)),
        (.wrongVerifier, false, false, false, false, .refuse(.invalid)),
        (.bound, true, false, false, false, .refuse(.invalid)),
        (.bound, false, true, false, false, .refuse(.userDisabled)),
        // A wrong binding or an expiry says invalid even for a disabled user: nothing about the user leaks.
        (.wrongVerifier, false, true, false, false, .refuse(.invalid)),
        (.bound, true, true, false, false, .refuse(.invalid)),
        // Presented again after a redemption: the session it opened is revoked, whoever presents it.
        (.bound, false, false, true, true, .revokeSession),
        (.wrongVerifier, false, false, true, true, .revokeSession),
        (.bound, true, true, true, true, .revokeSession),
        // Presented again after a refusal: nothing was opened, nothing changes.
        (.bound, false, false, true, false, .ignore),
        (.bound, false, true, true, false, .ignore),
    ]

    @Test("a code's redemption", arguments: codeTable)
    func code(presented: Presented, expired: Bool, disabled: Bool, spent: Bool, redeemed: Bool, expected: CodeVerdict) {
        let stored = StoredAuthorizationCode(
            clientID: "app", redirectURI: "app://cb", codeChallenge: "challenge",
            expiresAt: expired ? Self.now : Self.now + 60, userDisabled: disabled, spent: spent, redeemed: redeemed)
        var presentation = CodePresentation(
            hash: Data([1]), clientID: "app", redirectURI: "app://cb", codeChallenge: "challenge")
        switch presented {
        case .bound: break
        case .otherClient: presentation.clientID = "other"
        case .otherRedirect: presentation.redirectURI = "app://elsewhere"
        case .wrongVerifier: presentation.codeChallenge = "wrong"
        }
        #expect(Verdicts.code(stored, presentation: presentation, now: Self.now) == expected)
    }
}
