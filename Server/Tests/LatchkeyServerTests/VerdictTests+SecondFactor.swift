import Foundation
import LatchkeyServer
import Testing

/// The second factor's verdicts, as truth tables: what a code sent to a challenge does, how long a
/// person waits, and when a session is held back.
@Suite("Verdicts: second factor")
struct SecondFactorVerdictTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Facts → verdict, with a maximum of 5 attempts.
    static let attempts: [(FactorAttemptFacts, FactorAttemptVerdict)] = [
        (FactorAttemptFacts(proofAccepted: true), .pass),
        (FactorAttemptFacts(), .fail(killsChallenge: false, locksUntil: nil)),
        (FactorAttemptFacts(attempts: 4), .fail(killsChallenge: true, locksUntil: nil)),
        (FactorAttemptFacts(failuresInARow: 4), .fail(killsChallenge: false, locksUntil: now + 30)),
        (FactorAttemptFacts(failuresInARow: 5), .fail(killsChallenge: false, locksUntil: now + 60)),
        (FactorAttemptFacts(failuresInARow: 11), .fail(killsChallenge: false, locksUntil: now + 3600)),
        (FactorAttemptFacts(failuresInARow: 400), .fail(killsChallenge: false, locksUntil: now + 3600)),
        // A dead challenge counts nothing, whatever else holds; the code is not even looked at.
        (FactorAttemptFacts(spent: true, proofAccepted: true), .refuseInvalid),
        (FactorAttemptFacts(expired: true, proofAccepted: true), .refuseInvalid),
        (FactorAttemptFacts(attempts: 5, proofAccepted: true), .refuseInvalid),
        (FactorAttemptFacts(spent: true, ended: true, lockedUntil: now + 10), .refuseInvalid),
        // Then a user or session gone, before the wait.
        (FactorAttemptFacts(ended: true, lockedUntil: now + 10, proofAccepted: true), .refuseEnded),
        // Then the wait: a right code waits too.
        (FactorAttemptFacts(lockedUntil: now + 10, proofAccepted: true), .refuseLocked(until: now + 10)),
        (FactorAttemptFacts(lockedUntil: now + 10), .refuseLocked(until: now + 10)),
        // A wait that is over is no wait.
        (FactorAttemptFacts(lockedUntil: now, failuresInARow: 5, proofAccepted: true), .pass),
        (
            FactorAttemptFacts(lockedUntil: now - 1, failuresInARow: 5),
            .fail(killsChallenge: false, locksUntil: now + 60)
        ),
    ]

    @Test("a code sent to a challenge", arguments: attempts)
    func attempt(_ row: (FactorAttemptFacts, FactorAttemptVerdict)) {
        #expect(Verdicts.factorAttempt(row.0, maximumAttempts: 5, now: Self.now) == row.1)
    }

    @Test("the wait starts at the maximum, 30 s, doubling to an hour")
    func lockout() {
        #expect(Verdicts.factorLockout(failures: 4, maximum: 5) == nil)
        #expect(
            (5...14).map { Verdicts.factorLockout(failures: $0, maximum: 5) }
                == [30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600])
        #expect(Verdicts.factorLockout(failures: 1, maximum: 1) == 30)
    }

    @Test("a session opens with a proven factor, is held with an active one, and opens plain otherwise")
    func sessionOpening() {
        #expect(Verdicts.sessionOpening(activeFactors: 0) == .open(secondFactor: nil))
        #expect(Verdicts.sessionOpening(activeFactors: 1) == .hold)
        #expect(Verdicts.sessionOpening(activeFactors: 3) == .hold)
        #expect(Verdicts.sessionOpening(activeFactors: 1, proven: .totp) == .open(secondFactor: .totp))
        #expect(Verdicts.sessionOpening(activeFactors: 0, proven: .recoveryCode) == .open(secondFactor: .recoveryCode))
    }

    @Test("amr and aal of each way in")
    func assurance() {
        #expect(SessionAssurance(method: .classic).amr == ["fb"] && SessionAssurance(method: .classic).aal == 1)
        #expect(SessionAssurance(method: .easyLogin, secondFactor: .totp).amr == ["fb", "otp", "mfa"])
        #expect(SessionAssurance(method: .apple, secondFactor: .recoveryCode).amr == ["apple", "rcode", "mfa"])
        #expect(SessionAssurance(method: .guest).amr == ["anon"])
        #expect(SessionAssurance.unrecorded.amr.isEmpty && SessionAssurance.unrecorded.aal == 1)
        #expect(SessionAssurance(method: .limitedLogin, secondFactor: .totp).aal == 2)
    }

    /// Every combination of a factor change's facts, with the verdict the table in
    /// `Verdicts.factorChange` gives.
    @Test("a change of a second factor: a recent proof, of the factor once there is one")
    func factorChange() {
        var rows = 0
        for active in [false, true] {
            for anonymous in [false, true] {
                for factor in [false, true] {
                    for age in [0.0, 600, 601] {
                        for factorAge in [nil, 0.0, 600, 601] as [TimeInterval?] {
                            let facts = FactorChangeFacts(
                                sessionActive: active, anonymous: anonymous, activeFactor: factor,
                                secondsSinceProof: age, secondsSinceFactorProof: factorAge, window: 600)
                            let factorRecent = factorAge.map { $0 <= 600 } ?? false
                            let expected: FactorChangeVerdict =
                                !active
                                ? .sessionEnded
                                : anonymous
                                    ? .reauthenticate
                                    : factor
                                        ? (factorRecent ? .allow : .stepUp) : (age <= 600 ? .allow : .reauthenticate)
                            #expect(Verdicts.factorChange(facts) == expected, "\(facts)")
                            rows += 1
                        }
                    }
                }
            }
        }
        #expect(rows == 96)
        // The rows a reader checks first: the thief's stale session, the owner's fresh one, and a
        // fresh re-proof of Facebook on a session whose factor was proven long ago.
        #expect(Verdicts.factorChange(FactorChangeFacts(secondsSinceProof: 601)) == .reauthenticate)
        #expect(Verdicts.factorChange(FactorChangeFacts(secondsSinceProof: 10)) == .allow)
        #expect(
            Verdicts.factorChange(
                FactorChangeFacts(activeFactor: true, secondsSinceProof: 5, secondsSinceFactorProof: 86_400)) == .stepUp
        )
        #expect(
            Verdicts.factorChange(
                FactorChangeFacts(activeFactor: true, secondsSinceProof: 86_400, secondsSinceFactorProof: 5)) == .allow)
    }

    @Test("a merge's factors: moved when only the merged account has them, dropped under the caller's step-up")
    func mergeFactors() {
        let table: [(MergeFactorFacts, MergeFactorVerdict)] = [
            (MergeFactorFacts(), .dropSource),
            (MergeFactorFacts(targetHasFactor: true), .dropSource),
            (MergeFactorFacts(targetHasFactor: true, targetSessionProven: true), .dropSource),
            (MergeFactorFacts(sourceHasFactor: true, sourceFactorsResealed: true), .moveSource),
            (
                MergeFactorFacts(sourceHasFactor: true, targetSessionProven: true, sourceFactorsResealed: true),
                .moveSource
            ),
            (MergeFactorFacts(sourceHasFactor: true), .stale),
            (MergeFactorFacts(sourceHasFactor: true, targetHasFactor: true, targetSessionProven: true), .dropSource),
            (MergeFactorFacts(sourceHasFactor: true, targetHasFactor: true), .stepUp),
            (MergeFactorFacts(sourceHasFactor: true, targetHasFactor: true, sourceFactorsResealed: true), .stepUp),
        ]
        for (facts, verdict) in table { #expect(Verdicts.mergeFactors(facts) == verdict, "\(facts)") }
    }
}
