import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The pruning part of the storage contract: what `prune` deletes, what it must keep, and that no
/// other operation deletes expired rows or answers differently once they are gone.
extension StoreContractTests {
    /// Cutoffs that delete nothing; tests move the dates they are about.
    static let keepAll = PruneCutoffs(
        singleUseExpiredBefore: .distantPast, noncesExpiredBefore: .distantPast,
        pendingAuthorizationsExpiredBefore: .distantPast, authorizationCodesExpiredBefore: .distantPast,
        sessionsEndedBefore: .distantPast, auditEventsBefore: .distantPast)

    static func cutoffs(_ change: (inout PruneCutoffs) -> Void) -> PruneCutoffs {
        var cutoffs = keepAll
        change(&cutoffs)
        return cutoffs
    }

    /// The server's short-lived records at `now` (single-use, nonces, requests, codes); sessions
    /// and audit events kept.
    static func expiredRecords(at now: Date) -> PruneCutoffs {
        cutoffs {
            $0.singleUseExpiredBefore = now
            $0.noncesExpiredBefore = now
            $0.pendingAuthorizationsExpiredBefore = now.addingTimeInterval(-3600)
            $0.authorizationCodesExpiredBefore = now.addingTimeInterval(-3600)
        }
    }

    static func rotate(
        _ store: any LatchkeyStore, _ from: String, _ to: String, at now: Date
    ) async throws -> RefreshOutcome {
        try await store.rotateRefreshToken(
            hash: Data(from.utf8), newHash: Data(to.utf8), now: now, newExpiresAt: now.addingTimeInterval(3600))
    }

    @Test("a spent refresh token of a live session survives pruning, and reusing it still revokes the session")
    func spentTokenOfLiveSession() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "s", userID: "u", sessionID: "live"), now: Self.now)
            let later = Self.now.addingTimeInterval(10)
            #expect(
                try await Self.rotate(store, "live", "next", at: later)
                    == .rotated(sessionID: "live", userID: "u", assurance: .init(method: .guest)))
            // Past the spent token's own expiry, not the session's (renewed by the rotation).
            let report = try await store.prune(
                Self.cutoffs { $0.sessionsEndedBefore = Self.now.addingTimeInterval(3605) }, limit: 100)
            #expect(report == PruneReport(), "\(name)")
            #expect(try await store.isSessionActive(id: "live"), "\(name)")
            let reused = try await Self.rotate(store, "live", "thief", at: Self.now.addingTimeInterval(3606))
            #expect(reused == .reused(sessionID: "live"), "\(name)")
            #expect(try await !store.isSessionActive(id: "live"), "\(name)")
        }
    }

    @Test("once its last refresh token has expired, a session goes with all its refresh tokens")
    func expiredSession() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "s", userID: "u", sessionID: "old"), now: Self.now)
            _ = try await Self.rotate(store, "old", "old2", at: Self.now.addingTimeInterval(10))
            _ = try await Self.rotate(store, "old2", "old3", at: Self.now.addingTimeInterval(20))
            let other = Self.now.addingTimeInterval(3000)
            var second = Self.login(subject: "s", userID: "u", sessionID: "other")
            second.session?.createdAt = other
            second.session?.refreshExpiresAt = other.addingTimeInterval(3600)
            _ = try await store.signIn(second, now: other)
            let lastExpiry = Self.now.addingTimeInterval(3620)
            let early = try await store.prune(Self.cutoffs { $0.sessionsEndedBefore = lastExpiry }, limit: 100)
            #expect(early == PruneReport(), "\(name)")
            let due = try await store.prune(
                Self.cutoffs { $0.sessionsEndedBefore = lastExpiry.addingTimeInterval(1) }, limit: 100)
            #expect(due == PruneReport(sessions: 1, refreshTokens: 3), "\(name)")
            #expect(try await !store.isSessionActive(id: "old"), "\(name)")
            #expect(try await store.activeUser(id: "u", sessionID: "old") == nil, "\(name)")
            #expect(try await Self.rotate(store, "old", "x", at: lastExpiry) == .invalid, "\(name)")
            #expect(try await Self.rotate(store, "old3", "y", at: lastExpiry) == .invalid, "\(name)")
            // The user and their other session are untouched.
            #expect(try await store.user(id: "u") != nil, "\(name)")
            #expect(try await store.isSessionActive(id: "other"), "\(name)")
        }
    }

    @Test("revoked sessions are deleted, and then read exactly as before: ended")
    func revokedSessions() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "s", userID: "u", sessionID: "gone"), now: Self.now)
            _ = try await store.signIn(Self.login(subject: "s", userID: "u", sessionID: "kept"), now: Self.now)
            _ = try await Self.rotate(store, "gone", "gone2", at: Self.now)
            try await store.revokeSession(id: "gone", now: Self.now)
            // An Easy Login session, signed out: replaying its code must still be told apart.
            _ = try await store.signIn(
                Self.codeLogin(
                    subject: "e", code: "code", sessionID: "easy", expiresAt: Self.now.addingTimeInterval(60)),
                now: Self.now)
            let issued = try await store.redeemAuthorizationCode(
                Self.presentation("code"), session: Self.newSession("easy-r"), now: Self.now)
            #expect(issued == .issued(sessionID: "easy", userID: "user-e", scope: ["email", "public_profile"]))
            try await store.revokeSession(id: "easy", now: Self.now)

            func redeemAgain() async throws -> CodeRedemption {
                try await store.redeemAuthorizationCode(
                    Self.presentation("code"), session: Self.newSession("d"), now: Self.now)
            }
            func observed() async throws -> [String] {
                [
                    "\(try await store.isSessionActive(id: "gone"))", "\(try await store.isSessionActive(id: "easy"))",
                    "\(try await store.activeUser(id: "u", sessionID: "gone") == nil)",
                    "\(try await Self.rotate(store, "gone", "a", at: Self.now))",
                    "\(try await Self.rotate(store, "gone2", "b", at: Self.now))",
                    "\(try await Self.rotate(store, "easy-r", "c", at: Self.now))",
                    "\(try await store.revokeSession(id: "gone", now: Self.now))",
                    "\(try await redeemAgain())",
                ]
            }
            let before = try await observed()
            let report = try await store.prune(
                Self.cutoffs { $0.sessionsEndedBefore = Self.now.addingTimeInterval(1) }, limit: 100)
            #expect(report == PruneReport(sessions: 2, refreshTokens: 3), "\(name)")
            #expect(try await observed() == before, "\(name)")
            #expect(
                before == ["false", "false", "true", "invalid", "invalid", "invalid", "false", "reused"], "\(name)")
            #expect(try await store.isSessionActive(id: "kept"), "\(name)")
        }
    }

    @Test("audit events older than the retention are deleted, newer ones kept")
    func auditRetention() async throws {
        try await Self.onEveryBackend { name, store in
            let day: TimeInterval = 86_400
            _ = try await store.signIn(Self.login(subject: "a", userID: "ua", sessionID: "sa"), now: Self.now)
            let recent = Self.now.addingTimeInterval(100 * day)
            _ = try await store.signIn(Self.login(subject: "b", userID: "ub", sessionID: "sb"), now: recent)
            let middle = Self.cutoffs { $0.auditEventsBefore = Self.now.addingTimeInterval(50 * day) }
            #expect(try await store.prune(middle, limit: 100) == PruneReport(auditEvents: 1), "\(name)")
            #expect(try await store.prune(middle, limit: 100) == PruneReport(), "\(name)")
            let all = Self.cutoffs { $0.auditEventsBefore = recent.addingTimeInterval(1) }
            #expect(try await store.prune(all, limit: 100) == PruneReport(auditEvents: 1), "\(name)")
            // Audit rows go alone: users and sessions stay.
            #expect(try await store.user(id: "ua") != nil, "\(name)")
            #expect(try await store.isSessionActive(id: "sa"), "\(name)")
        }
    }

    @Test("expired nonces, single-use values, Easy Login requests and codes are deleted; live ones stay")
    func expiredRecords() async throws {
        try await Self.onEveryBackend { name, store in
            let past = Self.now.addingTimeInterval(-10)
            let live = Self.now.addingTimeInterval(60)
            let longAgo = Self.now.addingTimeInterval(-7200)
            #expect(try await store.useOnce(kind: "jti", value: "old", expiresAt: past, now: longAgo))
            #expect(try await store.useOnce(kind: "jti", value: "live", expiresAt: live, now: Self.now))
            try await store.storeNonce("old", expiresAt: past, now: longAgo)
            try await store.storeNonce("live", expiresAt: live, now: Self.now)
            for (handle, expiry) in [("old", longAgo), ("recent", past), ("live", live)] {
                _ = try await store.savePendingAuthorization(
                    Self.pending(handle, expiresAt: expiry), now: longAgo, limit: 10)
            }
            _ = try await store.signIn(
                Self.codeLogin(subject: "c", code: "old", sessionID: "s-old", expiresAt: longAgo), now: longAgo)
            _ = try await store.signIn(
                Self.codeLogin(subject: "c", code: "live", sessionID: "s-live", expiresAt: live), now: Self.now)

            let report = try await store.prune(Self.expiredRecords(at: Self.now), limit: 100)
            let expected = PruneReport(singleUse: 1, nonces: 1, pendingAuthorizations: 1, authorizationCodes: 1)
            #expect(report == expected, "\(name)")
            #expect(try await !store.useOnce(kind: "jti", value: "live", expiresAt: live, now: Self.now), "\(name)")
            #expect(try await store.takePendingAuthorization(handleHash: Data("old".utf8)) == nil, "\(name)")
            #expect(try await store.takePendingAuthorization(handleHash: Data("recent".utf8)) != nil, "\(name)")
            #expect(try await store.takePendingAuthorization(handleHash: Data("live".utf8)) != nil, "\(name)")
            let redeemed = try await store.redeemAuthorizationCode(
                Self.presentation("live"), session: Self.newSession("r"), now: Self.now)
            #expect(redeemed == .issued(sessionID: "s-live", userID: "user-c", scope: ["email", "public_profile"]))
            var login = Self.login(subject: "n", userID: "un", sessionID: "sn")
            login.singleUse = SingleUseClaims(jti: "j", jtiExpiresAt: live, serverNonce: "live")
            #expect(try await store.signIn(login, now: Self.now).created, "\(name)")
        }
    }

    @Test("each call deletes at most `limit` rows per table; the report says when to call again")
    func limit() async throws {
        try await Self.onEveryBackend { name, store in
            let past = Self.now.addingTimeInterval(-10)
            for index in 0..<5 {
                _ = try await store.useOnce(kind: "jti", value: "v\(index)", expiresAt: past, now: past)
                try await store.storeNonce("n\(index)", expiresAt: past, now: past)
            }
            // One session with five refresh tokens (four spent), signed out.
            _ = try await store.signIn(Self.login(subject: "l", userID: "u", sessionID: "t0"), now: Self.now)
            for step in 1...4 { _ = try await Self.rotate(store, "t\(step - 1)", "t\(step)", at: Self.now) }
            try await store.revokeSession(id: "t0", now: Self.now)

            let cutoffs = Self.cutoffs {
                $0.singleUseExpiredBefore = Self.now
                $0.noncesExpiredBefore = Self.now
                $0.sessionsEndedBefore = Self.now.addingTimeInterval(1)
            }
            var reports: [PruneReport] = []
            repeat {
                reports.append(try await store.prune(cutoffs, limit: 2))
            } while reports.count < 10 && reports[reports.count - 1].reachedLimit(2)
            #expect(reports.map(\.singleUse) == [2, 2, 1], "\(name)")
            #expect(reports.map(\.nonces) == [2, 2, 1], "\(name)")
            // Tokens before their session, which goes with its last ones: never a session without
            // its tokens deleted, nor more than `limit` tokens at once.
            #expect(reports.map(\.refreshTokens) == [2, 2, 1], "\(name)")
            #expect(reports.map(\.sessions) == [0, 0, 1], "\(name)")
            #expect(try await store.prune(cutoffs, limit: 2) == PruneReport(), "\(name)")
        }
    }

    @Test("sign-ins, nonces and Easy Login requests leave expired rows to the prune")
    func requestPathsDoNotPrune() async throws {
        try await Self.onEveryBackend { name, store in
            let past = Self.now.addingTimeInterval(-10)
            let longAgo = Self.now.addingTimeInterval(-7200)
            let live = Self.now.addingTimeInterval(60)
            _ = try await store.useOnce(kind: "jti", value: "stale", expiresAt: past, now: longAgo)
            try await store.storeNonce("stale", expiresAt: past, now: longAgo)
            _ = try await store.savePendingAuthorization(
                Self.pending("stale", expiresAt: longAgo), now: longAgo, limit: 10)
            _ = try await store.signIn(
                Self.codeLogin(subject: "x", code: "stale", sessionID: "p-stale", expiresAt: longAgo), now: longAgo)

            // Each of these once deleted expired rows of its table on the way.
            var login = Self.login(subject: "s", userID: "u", sessionID: "s")
            login.singleUse = SingleUseClaims(jti: "fresh", jtiExpiresAt: live, serverNonce: nil)
            _ = try await store.signIn(login, now: Self.now)
            #expect(try await store.useOnce(kind: "jti", value: "other", expiresAt: live, now: Self.now))
            try await store.storeNonce("fresh", expiresAt: live, now: Self.now)
            _ = try await store.savePendingAuthorization(
                Self.pending("fresh", expiresAt: live), now: Self.now, limit: 10)
            _ = try await store.signIn(
                Self.codeLogin(subject: "x", code: "fresh", sessionID: "p-fresh", expiresAt: live), now: Self.now)

            let report = try await store.prune(Self.expiredRecords(at: Self.now), limit: 100)
            let expected = PruneReport(singleUse: 1, nonces: 1, pendingAuthorizations: 1, authorizationCodes: 1)
            #expect(report == expected, "\(name)")
        }
    }

    @Test("an expired single-use record blocks nothing, pruned or not")
    func expiredSingleUse() async throws {
        try await Self.onEveryBackend { name, store in
            let expiry = Self.now.addingTimeInterval(10)
            let first = try await store.useOnce(kind: "k", value: "x", expiresAt: expiry, now: Self.now)
            #expect(first, "\(name)")
            #expect(try await !store.useOnce(kind: "k", value: "x", expiresAt: expiry, now: expiry), "\(name)")
            let later = expiry.addingTimeInterval(10)
            let renewed = later.addingTimeInterval(60)
            #expect(try await store.useOnce(kind: "k", value: "x", expiresAt: renewed, now: later), "\(name)")
            #expect(try await !store.useOnce(kind: "k", value: "x", expiresAt: renewed, now: later), "\(name)")
        }
    }
}

extension StoreContractTests {
    @Test("finished data-deletion requests go with the audit log's retention; open ones stay however old")
    func pruneDeletionRequests() async throws {
        try await Self.onEveryBackend { name, store in
            func request(_ id: String, subject: String, policy: DeletionPolicy) -> NewDeletionRequest {
                NewDeletionRequest(
                    id: id, code: "code-\(id)", provider: "facebook", subject: subject, appID: "1", policy: policy,
                    propertyKeys: [])
            }
            // Held people (a queued request of someone Latchkey knows nothing about is carried out at once).
            for subject in ["b", "c"] {
                _ = try await store.signIn(
                    Self.login(subject: subject, userID: "u-\(subject)", sessionID: "s-\(subject)"), now: Self.now)
            }
            _ = try await store.receiveDeletionRequest(request("done", subject: "a", policy: .delete), now: Self.now)
            _ = try await store.carryOutDeletionRequest(id: "done", now: Self.now)
            _ = try await store.receiveDeletionRequest(request("refused", subject: "b", policy: .queue), now: Self.now)
            _ = try await store.decideDeletionRequest(
                id: "refused", .refuse(reason: "kept by law"), now: Self.now, by: .commandLine)
            _ = try await store.receiveDeletionRequest(request("open", subject: "c", policy: .queue), now: Self.now)
            let cutoffs = PruneCutoffs(
                singleUseExpiredBefore: .distantPast, noncesExpiredBefore: .distantPast,
                pendingAuthorizationsExpiredBefore: .distantPast, authorizationCodesExpiredBefore: .distantPast,
                sessionsEndedBefore: .distantPast, auditEventsBefore: Self.now.addingTimeInterval(1))
            let report = try await store.prune(cutoffs, limit: 1)
            #expect(report.deletionRequests == 1 && report.reachedLimit(1), "\(name)")
            #expect(try await store.prune(cutoffs, limit: 10).deletionRequests == 1, "\(name)")
            #expect(try await store.deletionRequests(status: nil, limit: 10).map(\.id) == ["open"], "\(name)")
            #expect(try await store.deletionRequest(code: "code-done") == nil, "\(name)")
        }
    }
}
