import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

/// What every backend reads for a change of a second factor (`sessionProof`), and what it does
/// with factors in a merge (`Verdicts.mergeFactors`) and with a link that would split a person
/// across a business's apps (`Verdicts.link`'s `businessConflict`).
extension StoreContractTests {
    @Test("a session's proof: its sign-in, a later step-up, and whether it is still active")
    func sessionProof() async throws {
        try await Self.onEveryBackend { name, store in
            try await Self.userWithFactor(store, subject: "p")
            let before = try #require(try await store.sessionProof(id: "first-p", now: Self.now), "\(name)")
            #expect(before.userID == "u-p" && before.active && !before.anonymous, "\(name)")
            #expect(before.authenticatedAt == Self.now && before.steppedUpAt == nil, "\(name)")
            #expect(before.createdAt == Self.now && before.secondFactor == nil, "\(name)")
            #expect(before.factorProvenAt == nil, "\(name): it proved no factor")
            #expect(try await store.sessionProof(id: "nobody", now: Self.now) == nil, "\(name)")
            let later = Self.now + 200
            #expect(
                try await store.createFactorChallenge(
                    Self.challenge("proof", purpose: .stepUp, session: "first-p"), userID: "u-p"))
            _ = try await store.attemptFactorChallenge(
                hash: Data("challenge-proof".utf8), proof: .totp(factorID: "f-p", step: 101),
                action: .raiseSession(refreshTokenHash: Data("up".utf8), refreshExpiresAt: later + 7200),
                maximumAttempts: 5, now: later)
            let after = try #require(try await store.sessionProof(id: "first-p", now: later), "\(name)")
            #expect(after.steppedUpAt == later && after.secondFactor == .totp, "\(name)")
            #expect(after.authenticatedAt == Self.now && after.latestProof == later, "\(name)")
            #expect(after.factorProvenAt == later, "\(name)")
            // Past its end, or revoked, it is no longer active.
            #expect(try await store.sessionProof(id: "first-p", now: later + 7201)?.active == false, "\(name)")
            #expect(
                try await store.sessionProof(id: "first-p", now: later + 7199)?.active == true,
                "\(name): the step-up's refresh lifetime")
            _ = try await store.revokeSession(id: "first-p", now: later)
            #expect(try await store.sessionProof(id: "first-p", now: later)?.active == false, "\(name)")
        }
    }

    /// A merge of `source` (who has factor `f-source`) into `target` through `target`'s identity.
    static func factorMerge(
        _ store: any LatchkeyStore, resealed: [ResealedFactor], ticket: String = "ticket-f"
    ) -> MergeRecord {
        var record = MergeRecord(
            sourceUserID: "u-source", targetUserID: "u-target", provider: "facebook", subject: "target",
            ticketID: ticket, ticketExpiresAt: now + 600, targetSessionID: "first-target", reauthenticationWindow: 600)
        record.resealedFactors = resealed
        return record
    }

    @Test("a merge moves the merged account's factor and unused codes, only as sealed for the target")
    func mergeMovesFactors() async throws {
        try await Self.onEveryBackend { name, store in
            try await Self.userWithFactor(store, subject: "source")
            _ = try await store.signIn(
                Self.login(subject: "target", userID: "u-target", sessionID: "first-target"), now: Self.now)
            let stored = try #require(try await store.factors(userID: "u-source").first).secret
            // Sealed from a secret that is no longer stored: nothing happens, read again.
            let stale = ResealedFactor(id: "f-source", stored: Data("old".utf8), sealed: Data("new".utf8))
            await #expect(throws: MergeFactorRefusal.stale, "\(name)") {
                try await store.merge(Self.factorMerge(store, resealed: [stale]), now: Self.now)
            }
            await #expect(throws: MergeFactorRefusal.stale, "\(name)") {
                try await store.merge(Self.factorMerge(store, resealed: []), now: Self.now)
            }
            #expect(try await store.user(id: "u-source") != nil, "\(name): nothing was written")
            let fresh = ResealedFactor(id: "f-source", stored: stored, sealed: Data("sealed-for-target".utf8))
            _ = try await store.merge(Self.factorMerge(store, resealed: [fresh]), now: Self.now)
            let moved = try await store.factors(userID: "u-target")
            #expect(moved.map(\.id) == ["f-source"] && moved.first?.secret == Data("sealed-for-target".utf8))
            #expect(moved.first?.active == true, "\(name)")
            #expect(try await store.recoveryCodesLeft(userID: "u-target") == 3, "\(name)")
            #expect(try await store.recoveryCodeSalts(userID: "u-target") == ["u-source"], "\(name)")
            // A moved code is accepted under its old salt's hash, once.
            #expect(
                try await store.createFactorChallenge(
                    Self.challenge("after-merge", purpose: .stepUp, session: "first-target"), userID: "u-target"),
                "\(name)")
            let outcome = try await store.attemptFactorChallenge(
                hash: Data("challenge-after-merge".utf8),
                proof: .recoveryCode(hashes: [Data("not-a-code".utf8), Data("r1".utf8)]),
                action: .raiseSession(refreshTokenHash: Data("m-up".utf8), refreshExpiresAt: Self.now + 7200),
                maximumAttempts: 5, now: Self.now)
            guard case .passed("u-target", .recoveryCode, 2, _) = outcome else {
                Issue.record("\(name): \(outcome)")
                return
            }
            let event = try await store.auditEvents(userID: "u-target", limit: 5).first { $0.event.type == .userMerged }
            #expect(event?.event.detail["factors_moved"] == 1, "\(name)")
        }
    }

    @Test("when both accounts have factors, only an aal-2 caller merges, and the merged account's go")
    func mergeWithFactorsOnBothSides() async throws {
        try await Self.onEveryBackend { name, store in
            try await Self.userWithFactor(store, subject: "source")
            try await Self.userWithFactor(store, subject: "target")
            let stored = try #require(try await store.factors(userID: "u-source").first).secret
            let resealed = [ResealedFactor(id: "f-source", stored: stored, sealed: stored)]
            await #expect(throws: MergeFactorRefusal.stepUp, "\(name)") {
                try await store.merge(Self.factorMerge(store, resealed: resealed), now: Self.now)
            }
            #expect(
                try await store.createFactorChallenge(
                    Self.challenge("t-up", purpose: .stepUp, session: "first-target"), userID: "u-target"))
            _ = try await store.attemptFactorChallenge(
                hash: Data("challenge-t-up".utf8), proof: .totp(factorID: "f-target", step: 101),
                action: .raiseSession(refreshTokenHash: Data("t-up".utf8), refreshExpiresAt: Self.now + 7200),
                maximumAttempts: 5, now: Self.now)
            _ = try await store.merge(Self.factorMerge(store, resealed: resealed), now: Self.now)
            #expect(try await store.factors(userID: "u-target").map(\.id) == ["f-target"], "\(name)")
            #expect(try await store.recoveryCodeSalts(userID: "u-target") == ["u-target"], "\(name)")
            let event = try await store.auditEvents(userID: "u-target", limit: 5).first { $0.event.type == .userMerged }
            #expect(event?.event.detail["factors_dropped"] == 1, "\(name)")
        }
    }

    @Test("a link of a new identity whose business token another account holds is a conflict naming that identity")
    func businessConflict() async throws {
        try await Self.onEveryBackend { name, store in
            var first = Self.login(subject: "app1-alice", userID: "alice", sessionID: "a")
            first.businessToken = "tfb-alice"
            _ = try await store.signIn(first, now: Self.now)
            _ = try await store.signIn(Self.login(subject: "bob", userID: "bob", sessionID: "b"), now: Self.now)
            let link = LinkRecord(
                userID: "bob", identity: Self.identity("app2-alice"), mappedProperties: [:], provingSessionID: "b",
                businessToken: "tfb-alice")
            let outcome = try await store.linkIdentity(link, now: Self.now)
            #expect(
                outcome
                    == .conflict(owner: "alice", through: IdentityName(provider: "facebook", subject: "app1-alice")),
                "\(name)")
            #expect(try await store.user(id: "bob")?.identities.count == 1, "\(name): nothing linked")
            // Alice's own account takes it.
            var own = link
            own.userID = "alice"
            own.provingSessionID = "a"
            if case .linked(let user) = try await store.linkIdentity(own, now: Self.now) {
                #expect(user.identities.count == 2, "\(name)")
            } else {
                Issue.record("\(name): not linked")
            }
            // A sign-in's join by business (no caller's session) is the join itself, whoever
            // else holds the token: never refused by it.
            var join = LinkRecord(
                userID: "bob", identity: Self.identity("app3-alice"), mappedProperties: [:], businessToken: "tfb-alice")
            join.session = Self.newSession("joined")
            let joined = try await store.linkIdentity(join, now: Self.now)
            guard case .linked = joined else {
                Issue.record("\(name): a join was refused: \(joined)")
                return
            }
        }
    }
}
