import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The second-factor part of the storage contract, on every backend (PostgreSQL with its
/// one-statement sign-in and without): a sign-in of a user with an active factor keeps its
/// challenge instead of its session or code, a code is accepted once per factor and step however
/// many arrive at once, recovery codes are single use, wrong codes lock, a step-up replaces the
/// session's tokens.
extension StoreContractTests {
    static func challenge(
        _ name: String, purpose: FactorChallengePurpose = .signIn, session: String? = nil
    )
        -> NewFactorChallenge
    {
        NewFactorChallenge(
            hash: Data("challenge-\(name)".utf8), purpose: purpose, sessionID: session, plan: "{\"kind\":\"\(name)\"}",
            createdAt: now, expiresAt: now.addingTimeInterval(300))
    }

    /// A user `u-<subject>` signed in (session `first-<subject>`) with an active TOTP factor
    /// `f-<subject>` whose last accepted step is 100, and recovery codes `r1`…`r3`.
    static func userWithFactor(_ store: any LatchkeyStore, subject: String) async throws {
        _ = try await store.signIn(
            login(subject: subject, userID: "u-\(subject)", sessionID: "first-\(subject)"), now: now)
        let added = try await store.addFactor(
            NewFactor(
                id: "f-\(subject)", userID: "u-\(subject)", type: .totp, displayName: "Phone",
                secret: Data(repeating: 7, count: 20), createdAt: now),
            pendingSince: now.addingTimeInterval(-3600), limit: 10, now: now)
        #expect(added)
        let first = try await store.activateFactor(
            id: "f-\(subject)", userID: "u-\(subject)", step: 100,
            recoveryCodes: [Data("r1".utf8), Data("r2".utf8), Data("r3".utf8)],
            now: now)
        #expect(first == true)
    }

    @Test("a sign-in of a user with an active factor keeps its challenge, opening no session or code, on either path")
    func signInHeldForSecondFactor() async throws {
        try await Self.onEveryBackend { name, store in
            try await Self.userWithFactor(store, subject: "s")
            var held = Self.login(subject: "s", userID: "ignored", sessionID: "held")
            held.challenge = Self.challenge("one")
            await #expect(throws: SecondFactorRequired(userID: "u-s"), "\(name)") {
                try await store.signIn(held, now: Self.now)
            }
            #expect(try await !store.isSessionActive(id: "held"), "\(name)")
            let stored = try #require(try await store.factorChallenge(hash: Data("challenge-one".utf8)), "\(name)")
            #expect(stored.userID == "u-s" && stored.purpose == .signIn && stored.plan == "{\"kind\":\"one\"}")
            #expect(!stored.spent && stored.attempts == 0, "\(name)")
            // Changed properties take PostgreSQL's read-then-write path: held all the same.
            var merged = Self.login(subject: "s", userID: "ignored", sessionID: "held-2", mapped: ["name": "New"])
            merged.challenge = Self.challenge("two")
            await #expect(throws: SecondFactorRequired(userID: "u-s"), "\(name)") {
                try await store.signIn(merged, now: Self.now)
            }
            #expect(try await !store.isSessionActive(id: "held-2"), "\(name)")
            #expect(try await store.user(id: "u-s")?.properties["name"] == "New", "\(name): the sign-in is recorded")
            // An Easy Login code is held back too.
            var code = Self.codeLogin(subject: "s", code: "held-code", sessionID: "from-code", expiresAt: Self.now + 60)
            code.challenge = Self.challenge("three")
            await #expect(throws: SecondFactorRequired(userID: "u-s"), "\(name)") {
                try await store.signIn(code, now: Self.now)
            }
            let redeemed = try await store.redeemAuthorizationCode(
                Self.presentation("held-code"), session: Self.newSession("x"), now: Self.now)
            #expect(redeemed == .invalid, "\(name)")
            // A new user has no factor: nothing is held.
            var fresh = Self.login(subject: "new", userID: "u-new", sessionID: "fresh")
            fresh.challenge = Self.challenge("four")
            _ = try await store.signIn(fresh, now: Self.now)
            #expect(try await store.isSessionActive(id: "fresh"), "\(name)")
            #expect(try await store.factorChallenge(hash: Data("challenge-four".utf8)) == nil, "\(name)")
        }
    }

    @Test("a code passes a challenge once per factor and step, however many arrive at once; it opens the session")
    func codeAcceptedOnce() async throws {
        try await Self.onEveryBackend { name, store in
            try await Self.userWithFactor(store, subject: "s")
            for index in 0..<8 {
                var held = Self.login(subject: "s", userID: "ignored", sessionID: "held-\(index)")
                held.challenge = Self.challenge("c\(index)")
                _ = try? await store.signIn(held, now: Self.now)
            }
            // Ten attempts each, so the seven wrong ones lock no one.
            let outcomes = try await withThrowingTaskGroup(of: FactorAttemptOutcome.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await store.attemptFactorChallenge(
                            hash: Data("challenge-c\(index)".utf8), proof: .totp(factorID: "f-s", step: 101),
                            action: .openSession(
                                NewSession(
                                    id: "opened-\(index)", refreshTokenHash: Data("opened-\(index)".utf8),
                                    createdAt: Self.now, refreshExpiresAt: Self.now + 3600, method: .classic),
                                identity: ("facebook", "s")),
                            maximumAttempts: 10, now: Self.now)
                    }
                }
                return try await group.reduce(into: [FactorAttemptOutcome]()) { $0.append($1) }
            }
            let passed = outcomes.filter { if case .passed = $0 { true } else { false } }
            #expect(passed == [.passed(userID: "u-s", by: .totp, recoveryCodesLeft: nil)], "\(name): \(outcomes)")
            #expect(outcomes.filter { $0 == .wrong(attemptsLeft: 9) }.count == 7, "\(name): \(outcomes)")
            var open = 0
            for index in 0..<8 where try await store.isSessionActive(id: "opened-\(index)") { open += 1 }
            #expect(open == 1, "\(name)")
            // The session opened with the factor: its tokens say so.
            for index in 0..<8 where try await store.isSessionActive(id: "opened-\(index)") {
                let rotated = try await store.rotateRefreshToken(
                    hash: Data("opened-\(index)".utf8), newHash: Data("n-\(index)".utf8), now: Self.now,
                    newExpiresAt: Self.now + 7200, retryWindow: 0, retryCandidates: [])
                #expect(
                    rotated
                        == .rotated(
                            sessionID: "opened-\(index)", userID: "u-s",
                            assurance: SessionAssurance(method: .classic, secondFactor: .totp)), "\(name)")
            }
            // An earlier step, or the same one, is refused; a later one passes.
            var again = Self.login(subject: "s", userID: "ignored", sessionID: "again")
            again.challenge = Self.challenge("again")
            _ = try? await store.signIn(again, now: Self.now)
            let action = FactorChallengeAction.openSession(
                NewSession(
                    id: "again", refreshTokenHash: Data("again".utf8), createdAt: Self.now,
                    refreshExpiresAt: Self.now + 3600), identity: nil)
            // Both count as wrong codes on this challenge (ten attempts: nobody is locked yet).
            for (step, left): (Int64, Int) in [(100, 9), (101, 8)] {
                #expect(
                    try await store.attemptFactorChallenge(
                        hash: Data("challenge-again".utf8), proof: .totp(factorID: "f-s", step: step), action: action,
                        maximumAttempts: 10, now: Self.now) == .wrong(attemptsLeft: left),
                    "\(name)")
            }
            #expect(
                try await store.attemptFactorChallenge(
                    hash: Data("challenge-again".utf8), proof: .totp(factorID: "f-s", step: 102), action: action,
                    maximumAttempts: 10, now: Self.now) == .passed(userID: "u-s", by: .totp, recoveryCodesLeft: nil),
                "\(name)")
            #expect(
                try await store.attemptFactorChallenge(
                    hash: Data("challenge-again".utf8), proof: .totp(factorID: "f-s", step: 103), action: action,
                    maximumAttempts: 10, now: Self.now) == .challengeInvalid, "\(name): spent")
            #expect(try await store.factors(userID: "u-s").first?.lastStep == 102, "\(name)")
        }
    }

    @Test("recovery codes are single use in any order; wrong codes lock the user, a pass resets; expiry and ends")
    func recoveryAndLockout() async throws {
        try await Self.onEveryBackend { name, store in
            try await Self.userWithFactor(store, subject: "s")
            func challenge(_ id: String) async throws -> Data {
                var held = Self.login(subject: "s", userID: "ignored", sessionID: "held-\(id)")
                held.challenge = Self.challenge(id)
                _ = try? await store.signIn(held, now: Self.now)
                return Data("challenge-\(id)".utf8)
            }
            func attempt(
                _ hash: Data, _ proof: FactorProof, at time: Date = Self.now
            ) async throws
                -> FactorAttemptOutcome
            {
                try await store.attemptFactorChallenge(
                    hash: hash, proof: proof,
                    action: .openSession(
                        NewSession(
                            id: "s-\(UUID().uuidString)", refreshTokenHash: Data(UUID().uuidString.utf8),
                            createdAt: time, refreshExpiresAt: time + 3600), identity: nil),
                    maximumAttempts: 3, now: time)
            }
            let a = try await challenge("a")
            #expect(
                try await attempt(a, .recoveryCode(hashes: [Data("r2".utf8)]))
                    == .passed(userID: "u-s", by: .recoveryCode, recoveryCodesLeft: 2), "\(name)")
            let b = try await challenge("b")
            #expect(
                try await attempt(b, .recoveryCode(hashes: [Data("r2".utf8)])) == .wrong(attemptsLeft: 2), "\(name)")
            #expect(try await attempt(b, .none) == .wrong(attemptsLeft: 1), "\(name)")
            #expect(try await attempt(b, .none) == .wrong(attemptsLeft: 0), "\(name)")
            #expect(try await attempt(b, .recoveryCode(hashes: [Data("r1".utf8)])) == .challengeInvalid, "\(name)")
            let c = try await challenge("c")
            #expect(try await attempt(c, .recoveryCode(hashes: [Data("r1".utf8)])) == .locked(until: Self.now + 30))
            let later = Self.now + 31
            #expect(try await attempt(c, .none, at: later) == .wrong(attemptsLeft: 2), "\(name)")
            #expect(try await attempt(c, .none, at: later) == .locked(until: later + 60), "\(name)")
            #expect(
                try await attempt(c, .recoveryCode(hashes: [Data("r1".utf8)]), at: later + 61)
                    == .passed(userID: "u-s", by: .recoveryCode, recoveryCodesLeft: 1), "\(name)")
            let d = try await challenge("d")
            #expect(try await attempt(d, .none, at: later + 62) == .wrong(attemptsLeft: 2), "\(name): reset")
            #expect(try await attempt(d, .none, at: Self.now + 301) == .challengeInvalid, "\(name): expired")
            let e = try await challenge("e")
            _ = try await store.setUserDisabled(id: "u-s", disabled: true, now: Self.now, by: .commandLine)
            #expect(try await attempt(e, .recoveryCode(hashes: [Data("r3".utf8)])) == .ended, "\(name)")
            #expect(try await store.recoveryCodesLeft(userID: "u-s") == 1, "\(name)")
            let events = try await store.auditEvents(userID: "u-s", before: nil, limit: 100).map(\.event.type)
            #expect(events.filter { $0 == .factorLocked }.count == 2, "\(name)")
            #expect(events.filter { $0 == .factorUsed }.count == 2, "\(name)")
        }
    }

    @Test("a step-up raises the session and replaces its refresh token; only the user's active session gets one")
    func stepUp() async throws {
        try await Self.onEveryBackend { name, store in
            try await Self.userWithFactor(store, subject: "s")
            #expect(
                try await store.createFactorChallenge(
                    Self.challenge("up", purpose: .stepUp, session: "first-s"), userID: "u-s"))
            #expect(
                try await !store.createFactorChallenge(
                    Self.challenge("other", purpose: .stepUp, session: "first-s"), userID: "someone-else"), "\(name)")
            let outcome = try await store.attemptFactorChallenge(
                hash: Data("challenge-up".utf8), proof: .totp(factorID: "f-s", step: 101),
                action: .raiseSession(refreshTokenHash: Data("raised".utf8), refreshExpiresAt: Self.now + 7200),
                maximumAttempts: 5, now: Self.now)
            #expect(
                outcome == .passed(userID: "u-s", by: .totp, recoveryCodesLeft: nil, sessionMethod: .guest), "\(name)")
            let rotated = try await store.rotateRefreshToken(
                hash: Data("raised".utf8), newHash: Data("after".utf8), now: Self.now, newExpiresAt: Self.now + 7200,
                retryWindow: 0, retryCandidates: [])
            #expect(
                rotated
                    == .rotated(
                        sessionID: "first-s", userID: "u-s",
                        assurance: SessionAssurance(method: .guest, secondFactor: .totp)), "\(name)")
            // The token held before the step-up is forgotten: refused, without ending the session.
            let old = try await store.rotateRefreshToken(
                hash: Data("first-s".utf8), newHash: Data("x".utf8), now: Self.now, newExpiresAt: Self.now + 7200,
                retryWindow: 0, retryCandidates: [])
            #expect(old == .invalid, "\(name)")
            #expect(try await store.isSessionActive(id: "first-s"), "\(name)")
            // One step-up challenge per session: a new one replaces the last.
            for id in ["one", "two"] {
                #expect(
                    try await store.createFactorChallenge(
                        Self.challenge(id, purpose: .stepUp, session: "first-s"), userID: "u-s"), "\(name)")
            }
            #expect(try await store.factorChallenge(hash: Data("challenge-one".utf8)) == nil, "\(name)")
            #expect(try await store.factorChallenge(hash: Data("challenge-two".utf8)) != nil, "\(name)")
            // An expired session gets none, nor does one that ended.
            var late = Self.challenge("late", purpose: .stepUp, session: "first-s")
            late.createdAt = Self.now + 8000
            #expect(try await !store.createFactorChallenge(late, userID: "u-s"), "\(name)")
            _ = try await store.revokeSession(id: "first-s", now: Self.now)
            #expect(
                try await !store.createFactorChallenge(
                    Self.challenge("ended", purpose: .stepUp, session: "first-s"), userID: "u-s"), "\(name)")
            #expect(
                try await store.attemptFactorChallenge(
                    hash: Data("challenge-two".utf8), proof: .totp(factorID: "f-s", step: 105),
                    action: .raiseSession(refreshTokenHash: Data("r2".utf8), refreshExpiresAt: Self.now + 7200),
                    maximumAttempts: 5, now: Self.now) == .ended, "\(name)")
        }
    }

    @Test("links open with the proving session's factor or are held; removing the last factor forgets the rest")
    func linksAndRemoval() async throws {
        try await Self.onEveryBackend { name, store in
            try await Self.userWithFactor(store, subject: "s")
            func link(_ subject: String, session: String, proven: SecondFactorKind?) -> LinkRecord {
                var record = LinkRecord(
                    userID: "u-s",
                    identity: StoredIdentity(
                        provider: "apple", subject: subject, appID: "app", grantedPermissions: [], firstSeen: Self.now,
                        lastSeen: Self.now), mappedProperties: [:],
                    session: NewSession(
                        id: session, refreshTokenHash: Data(session.utf8), createdAt: Self.now,
                        refreshExpiresAt: Self.now + 3600, method: .apple))
                record.provenSecondFactor = proven
                record.challenge = Self.challenge(session)
                return record
            }
            await #expect(throws: SecondFactorRequired(userID: "u-s"), "\(name)") {
                try await store.linkIdentity(link("a1", session: "link-held", proven: nil), now: Self.now)
            }
            #expect(try await !store.isSessionActive(id: "link-held"), "\(name)")
            #expect(try await store.user(id: "u-s")?.identity("apple", "a1") != nil, "\(name): linked all the same")
            _ = try await store.linkIdentity(link("a2", session: "link-open", proven: .recoveryCode), now: Self.now)
            let rotated = try await store.rotateRefreshToken(
                hash: Data("link-open".utf8), newHash: Data("n".utf8), now: Self.now, newExpiresAt: Self.now + 7200,
                retryWindow: 0, retryCandidates: [])
            #expect(
                rotated
                    == .rotated(
                        sessionID: "link-open", userID: "u-s",
                        assurance: SessionAssurance(method: .apple, secondFactor: .recoveryCode)), "\(name)")

            #expect(try await store.removeFactor(id: "f-s", userID: "u-s", now: Self.now), "\(name)")
            #expect(try await store.recoveryCodesLeft(userID: "u-s") == 0, "\(name)")
            #expect(try await store.factorChallenge(hash: Data("challenge-link-held".utf8)) == nil, "\(name)")
            #expect(try await !store.removeFactor(id: "f-s", userID: "u-s", now: Self.now), "\(name)")
            #expect(try await !store.replaceRecoveryCodes(userID: "u-s", hashes: [Data("z".utf8)], now: Self.now))
            // No factor: the next sign-in opens at once.
            var next = Self.login(subject: "s", userID: "ignored", sessionID: "after")
            next.challenge = Self.challenge("after")
            _ = try await store.signIn(next, now: Self.now)
            #expect(try await store.isSessionActive(id: "after"), "\(name)")
        }
    }

    @Test(
        "enrolment: pending factors lapse, at most `limit`; wrong verifications drop a pending one; prune expires challenges"
    )
    func enrolmentBounds() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "s", userID: "u", sessionID: "a"), now: Self.now)
            func add(_ id: String, at time: Date) async throws -> Bool {
                try await store.addFactor(
                    NewFactor(
                        id: id, userID: "u", type: .totp, displayName: nil, secret: Data(repeating: 1, count: 20),
                        createdAt: time), pendingSince: time - 3600, limit: 2, now: time)
            }
            #expect(try await add("p1", at: Self.now), "\(name)")
            #expect(try await add("p2", at: Self.now), "\(name)")
            #expect(try await !add("p3", at: Self.now), "\(name): at the limit")
            #expect(try await add("p4", at: Self.now + 3601), "\(name): the lapsed ones made room")
            #expect(try await store.factors(userID: "u").map(\.id) == ["p4"], "\(name)")
            #expect(
                try await !store.addFactor(
                    NewFactor(
                        id: "x", userID: "nobody", type: .totp, displayName: nil, secret: Data(), createdAt: Self.now),
                    pendingSince: Self.now, limit: 2, now: Self.now), "\(name)")
            #expect(try await store.failFactorVerification(id: "p4", userID: "u", limit: 2), "\(name)")
            #expect(try await !store.failFactorVerification(id: "p4", userID: "u", limit: 2), "\(name)")
            #expect(try await store.factors(userID: "u").isEmpty, "\(name)")

            try await Self.userWithFactor(store, subject: "t")
            var held = Self.login(subject: "t", userID: "ignored", sessionID: "held")
            held.challenge = Self.challenge("old")
            _ = try? await store.signIn(held, now: Self.now)
            let report = try await store.prune(
                Self.cutoffs { $0.factorChallengesExpiredBefore = Self.now + 301 }, limit: 100)
            #expect(report.factorChallenges == 1, "\(name)")
            #expect(try await store.factorChallenge(hash: Data("challenge-old".utf8)) == nil, "\(name)")
        }
    }
}
