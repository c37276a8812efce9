import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The storage contract of guests, linking, merging, deleting and background jobs: every backend
/// reads the same facts and applies what `Verdicts` decides.
extension StoreContractTests {
    static func session(_ id: String, at date: Date = now) -> NewSession {
        NewSession(
            id: id, refreshTokenHash: Data(id.utf8), createdAt: date, refreshExpiresAt: date.addingTimeInterval(3600))
    }

    static func identity(_ subject: String, app: String = "1") -> StoredIdentity {
        StoredIdentity(
            provider: "facebook", subject: subject, appID: app, grantedPermissions: ["email"], firstSeen: now,
            lastSeen: now)
    }

    @Test("a guest has no identity, and linking one keeps its id and properties and makes it a full user")
    func guestThenLink() async throws {
        try await Self.onEveryBackend { name, store in
            let guest = try await store.createGuest(id: "g1", session: Self.session("gs"), now: Self.now)
            #expect(guest.anonymous && guest.identities.isEmpty && guest.id == "g1", "\(name)")
            #expect(try await store.user(id: "g1") == guest, "\(name)")
            #expect(try await store.auditEvents(userID: "g1", limit: 5).map(\.event.type) == [.guestCreated], "\(name)")
            // A guest's refresh says so, for the new access token's claim.
            let rotated = try await store.rotateRefreshToken(
                hash: Data("gs".utf8), newHash: Data("gs2".utf8), now: Self.now, newExpiresAt: Self.now + 3600)
            #expect(
                rotated == .rotated(sessionID: "gs", userID: "g1", anonymous: true, assurance: .init(method: .guest)),
                "\(name)")
            _ = try await store.updateProperties(userID: "g1", properties: ["name": "Kept"], now: Self.now)
            let later = Self.now.addingTimeInterval(60)
            let outcome = try await store.linkIdentity(
                LinkRecord(
                    userID: "g1", identity: Self.identity("f1"), mappedProperties: ["name": "Alice", "email": "a@x"],
                    provingSessionID: "gs"), now: later)
            guard case .linked(let user) = outcome else {
                Issue.record("\(name): \(outcome)")
                return
            }
            #expect(!user.anonymous && user.id == "g1", "\(name)")
            #expect(user.properties == ["name": "Kept", "email": "a@x"], "\(name): the link fills, never overwrites")
            #expect(user.identities.map(\.subject) == ["f1"], "\(name)")
            #expect(try await store.user(id: "g1") == user, "\(name)")
            // The same identity again: nothing changes but the last sign-in.
            let again = try await store.linkIdentity(
                LinkRecord(userID: "g1", identity: Self.identity("f1"), mappedProperties: ["other": 1]),
                now: later.addingTimeInterval(5))
            guard case .alreadyLinked(let same) = again else {
                Issue.record("\(name): \(again)")
                return
            }
            #expect(same.properties == user.properties && same.identities.count == 1, "\(name)")
            #expect(same.identities.first?.lastSeen == later.addingTimeInterval(5), "\(name)")
            // Signing in with it now finds the former guest.
            let signedIn = try await store.signIn(
                Self.login(subject: "f1", userID: "new", sessionID: "s2"), now: later.addingTimeInterval(9))
            #expect(!signedIn.created && signedIn.user.id == "g1", "\(name)")
            let rotatedFull = try await store.rotateRefreshToken(
                hash: Data("gs2".utf8), newHash: Data("gs3".utf8), now: later, newExpiresAt: later + 3600)
            #expect(
                rotatedFull
                    == .rotated(sessionID: "gs", userID: "g1", anonymous: false, assurance: .init(method: .guest)),
                "\(name)")
        }
    }

    @Test("linking another user's identity is a conflict that writes nothing, single-use values included")
    func linkConflict() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "owned", userID: "owner", sessionID: "o"), now: Self.now)
            _ = try await store.createGuest(id: "g", session: Self.session("g"), now: Self.now)
            let once = SingleUseClaims(jti: "jti-1", jtiExpiresAt: Self.now + 600, serverNonce: nil)
            let record = LinkRecord(
                userID: "g", identity: Self.identity("owned"), mappedProperties: [:], singleUse: once,
                session: Self.session("would-open"))
            #expect(try await store.linkIdentity(record, now: Self.now) == .conflict(owner: "owner"), "\(name)")
            #expect(try await store.user(id: "g")?.anonymous == true, "\(name)")
            #expect(try await store.isSessionActive(id: "would-open") == false, "\(name)")
            // The jti is still unspent: the same credential can sign in to the owner.
            #expect(try await store.useOnce(kind: "jti", value: "jti-1", expiresAt: Self.now + 600, now: Self.now))
            // A replayed jti and a disabled caller are refused before the owner is looked at.
            await #expect(throws: IdentityRefusal.replayed) { try await store.linkIdentity(record, now: Self.now) }
            try await store.setUserDisabled(id: "g", disabled: true, now: Self.now, by: .commandLine)
            var fresh = record
            fresh.singleUse = nil
            await #expect(throws: IdentityRefusal.userDisabled) { try await store.linkIdentity(fresh, now: Self.now) }
            fresh.userID = "gone"
            await #expect(throws: IdentityRefusal.sessionEnded) { try await store.linkIdentity(fresh, now: Self.now) }
        }
    }

    @Test("unlinking refuses what is not linked and the last identity, and removes the rest")
    func unlink() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "a", userID: "u", sessionID: "s"), now: Self.now)
            await #expect(throws: IdentityRefusal.lastSignInMethod) {
                try await store.unlinkIdentity(
                    userID: "u", sessionID: "s", provider: "facebook", subject: "a", now: Self.now,
                    reauthenticationWindow: 600)
            }
            await #expect(throws: IdentityRefusal.notLinked) {
                try await store.unlinkIdentity(
                    userID: "u", sessionID: "s", provider: "facebook", subject: "b", now: Self.now,
                    reauthenticationWindow: 600)
            }
            _ = try await store.linkIdentity(
                LinkRecord(userID: "u", identity: Self.identity("b", app: "2"), mappedProperties: [:]), now: Self.now)
            // Another session of the user: unlinking ends it with the identity.
            _ = try await store.signIn(Self.login(subject: "b", userID: "x", sessionID: "other"), now: Self.now)
            await #expect(throws: IdentityRefusal.reauthenticationRequired) {
                try await store.unlinkIdentity(
                    userID: "u", sessionID: "s", provider: "facebook", subject: "a", now: Self.now + 601,
                    reauthenticationWindow: 600)
            }
            let after = try await store.unlinkIdentity(
                userID: "u", sessionID: "s", provider: "facebook", subject: "a", now: Self.now,
                reauthenticationWindow: 600)
            let otherEnded = try await store.isSessionActive(id: "other") == false
            let ownKept = try await store.isSessionActive(id: "s")
            #expect(otherEnded && ownKept, "\(name)")
            #expect(after.identities.map(\.subject) == ["b"], "\(name)")
            #expect(try await store.user(id: "u") == after, "\(name)")
            let events = try await store.auditEvents(userID: "u", limit: 5).map(\.event.type)
            #expect(events.first == .identityUnlinked && events.contains(.identityLinked), "\(name)")
            // The identity is free again: its next sign-in makes a new user.
            let signedIn = try await store.signIn(
                Self.login(subject: "a", userID: "u2", sessionID: "s2"), now: Self.now)
            #expect(signedIn.created && signedIn.user.id == "u2", "\(name)")
        }
    }

    @Test("a merge moves identities, fills properties, ends the merged account and spends the ticket")
    func merge() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(
                Self.login(subject: "owned", userID: "target", sessionID: "t", mapped: ["name": "Target"]),
                now: Self.now)
            _ = try await store.signIn(
                Self.login(
                    subject: "theirs", userID: "source", sessionID: "src", mapped: ["name": "Source", "city": "Oslo"]),
                now: Self.now)
            let record = MergeRecord(
                sourceUserID: "source", targetUserID: "target", provider: "facebook", subject: "owned",
                ticketID: "ticket-1", ticketExpiresAt: Self.now + 600, targetSessionID: "t", reauthenticationWindow: 600
            )
            // The caller's session must have signed in recently.
            await #expect(throws: IdentityRefusal.reauthenticationRequired) {
                try await store.merge(record, now: Self.now.addingTimeInterval(601))
            }
            // The ticket's identity must be the caller's, and the pair as issued.
            var wrongPair = record
            wrongPair.subject = "theirs"
            await #expect(throws: IdentityRefusal.ticketInvalid) { try await store.merge(wrongPair, now: Self.now) }
            var same = record
            same.sourceUserID = "target"
            await #expect(throws: IdentityRefusal.ticketInvalid) { try await store.merge(same, now: Self.now) }
            let merged = try await store.merge(record, now: Self.now)
            #expect(merged.id == "target", "\(name)")
            #expect(Set(merged.identities.map(\.subject)) == ["owned", "theirs"], "\(name)")
            #expect(merged.properties == ["name": "Target", "city": "Oslo"], "\(name): the caller's win")
            #expect(try await store.user(id: "source") == nil, "\(name)")
            #expect(try await store.isSessionActive(id: "src") == false, "\(name)")
            #expect(try await store.isSessionActive(id: "t"), "\(name)")
            let event = try await store.auditEvents(userID: "target", limit: 1).first?.event
            #expect(event?.type == .userMerged && event?.detail["from"] == "source", "\(name)")
            // Replayed: spent, and the source is gone anyway.
            await #expect(throws: IdentityRefusal.ticketInvalid) { try await store.merge(record, now: Self.now) }
            // The moved identity signs in to the target now.
            let signedIn = try await store.signIn(
                Self.login(subject: "theirs", userID: "x", sessionID: "y"), now: Self.now)
            #expect(signedIn.user.id == "target", "\(name)")
        }
    }

    @Test("deleting needs a recent sign-in (guests exempt), removes everything, queues revocations")
    func deletion() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "del", userID: "u", sessionID: "s"), now: Self.now)
            _ = try await store.signIn(Self.login(subject: "del", userID: "u", sessionID: "s2"), now: Self.now)
            let late = Self.now.addingTimeInterval(601)
            await #expect(throws: IdentityRefusal.reauthenticationRequired) {
                try await store.deleteUser(id: "u", sessionID: "s", now: late, reauthenticationWindow: 600)
            }
            await #expect(throws: IdentityRefusal.sessionEnded) {
                try await store.deleteUser(id: "u", sessionID: "not-theirs", now: Self.now, reauthenticationWindow: 600)
            }
            // A fresh proof of a linked credential renews the session's sign-in.
            _ = try await store.linkIdentity(
                LinkRecord(userID: "u", identity: Self.identity("del"), mappedProperties: [:], provingSessionID: "s"),
                now: late)
            try await store.deleteUser(id: "u", sessionID: "s", now: late, reauthenticationWindow: 600)
            #expect(try await store.user(id: "u") == nil, "\(name)")
            #expect(try await store.isSessionActive(id: "s2") == false, "\(name)")
            let events = try await store.auditEvents(userID: "u", limit: 10)
            #expect(events.map(\.event.type) == [.userDeleted], "\(name): only the tombstone")
            #expect(events.first?.event.detail == ["by": "user"], "\(name)")
            let jobs = try await store.claimJobs(now: late, leaseUntil: late + 300, limit: 10)
            #expect(jobs.count == 1 && jobs.first?.kind == .facebookRevokePermissions, "\(name)")
            #expect(jobs.first?.payload == ["app_id": "1", "subject": "del"] && jobs.first?.attempts == 1, "\(name)")
            // Leased: not claimed again until the lease ends.
            #expect(try await store.claimJobs(now: late + 10, leaseUntil: late + 310, limit: 10).isEmpty, "\(name)")
            let job = try #require(jobs.first)
            try await store.finishJob(id: job.id, outcome: .retry(at: late + 60, error: "down"), now: late + 1)
            #expect(try await store.claimJobs(now: late + 30, leaseUntil: late + 330, limit: 10).isEmpty, "\(name)")
            let second = try await store.claimJobs(now: late + 61, leaseUntil: late + 361, limit: 10)
            #expect(second.map(\.attempts) == [2], "\(name)")
            let done = AuditEvent(type: .facebookPermissionsRevoked, userID: "u", detail: ["app_id": "1"])
            try await store.finishJob(id: job.id, outcome: .done(done), now: late + 62)
            try await store.finishJob(id: job.id, outcome: .done(done), now: late + 63)
            #expect(try await store.claimJobs(now: late + 9999, leaseUntil: late + 99999, limit: 10).isEmpty)
            let recorded = try await store.auditEvents(userID: "u", limit: 10).map(\.event.type)
            #expect(recorded == [.facebookPermissionsRevoked, .userDeleted], "\(name): recorded once")
            // The identity signs in to a new user.
            let again = try await store.signIn(Self.login(subject: "del", userID: "u-new", sessionID: "n"), now: late)
            #expect(again.created && again.user.id == "u-new", "\(name)")
            // A guest deletes without a recent sign-in.
            _ = try await store.createGuest(id: "g", session: Self.session("gs"), now: Self.now)
            try await store.deleteUser(id: "g", sessionID: "gs", now: late + 86_400, reauthenticationWindow: 600)
            #expect(try await store.user(id: "g") == nil, "\(name)")
        }
    }

    @Test("unused guests are pruned; used ones and full users stay")
    func pruneGuests() async throws {
        try await Self.onEveryBackend { name, store in
            let day: TimeInterval = 86_400
            _ = try await store.createGuest(id: "idle", session: Self.session("idle"), now: Self.now)
            _ = try await store.createGuest(id: "busy", session: Self.session("busy"), now: Self.now)
            _ = try await store.createGuest(
                id: "young", session: Self.session("young", at: Self.now + 20 * day),
                now: Self.now + 20 * day)
            _ = try await store.signIn(Self.login(subject: "full", userID: "full", sessionID: "f"), now: Self.now)
            // `busy` refreshes, renewing its session's expiry past the cutoff (as a refresh on day
            // 25 with 30-day refresh tokens would).
            _ = try await store.rotateRefreshToken(
                hash: Data("busy".utf8), newHash: Data("busy2".utf8), now: Self.now + 60,
                newExpiresAt: Self.now + 55 * day)
            // Day 31 with a 30-day TTL and 30-day refresh tokens: used after day 1 means a session
            // expiring after day 31.
            let at = Self.now + 31 * day
            let cutoffs = PruneCutoffs(
                singleUseExpiredBefore: .distantPast, noncesExpiredBefore: .distantPast,
                pendingAuthorizationsExpiredBefore: .distantPast, authorizationCodesExpiredBefore: .distantPast,
                sessionsEndedBefore: .distantPast, auditEventsBefore: .distantPast,
                guestsUnusedBefore: at - 30 * day, guestSessionsExpiringAfter: at)
            let report = try await store.prune(cutoffs, limit: 10)
            #expect(report.guests == 1, "\(name)")
            #expect(try await store.user(id: "idle") == nil, "\(name)")
            #expect(try await store.auditEvents(userID: "idle", limit: 5).isEmpty, "\(name)")
            for kept in ["busy", "young", "full"] { #expect(try await store.user(id: kept) != nil, "\(name) \(kept)") }
        }
    }

    @Test("a new identity that joins by business is refused, writing nothing; its business token is kept")
    func businessJoin() async throws {
        try await Self.onEveryBackend { name, store in
            var first = Self.login(subject: "app1-id", userID: "u1", sessionID: "s1")
            first.joinsByBusiness = true
            first.singleUse = SingleUseClaims(jti: "j1", jtiExpiresAt: Self.now + 600, serverNonce: nil)
            await #expect(throws: SignInConflict.newIdentity) { try await store.signIn(first, now: Self.now) }
            #expect(try await store.user(id: "u1") == nil, "\(name)")
            #expect(try await store.isSessionActive(id: "s1") == false, "\(name)")
            // Nothing was spent: the second pass, with the token looked up, spends the jti.
            first.joinsByBusiness = false
            first.businessToken = "tfb-1"
            #expect(try await store.signIn(first, now: Self.now).created, "\(name)")
            #expect(try await store.userID(businessToken: "tfb-1") == "u1", "\(name)")
            #expect(try await store.userID(businessToken: "tfb-2") == nil, "\(name)")
            // A returning identity is never new, whatever the flag.
            var again = Self.login(subject: "app1-id", userID: "x", sessionID: "s2")
            again.joinsByBusiness = true
            #expect(try await store.signIn(again, now: Self.now).user.id == "u1", "\(name)")
            // The second app's identity joins through a link carrying its own token and a session.
            var second = Self.identity("app2-id", app: "2")
            second.firstSeen = Self.now
            let outcome = try await store.linkIdentity(
                LinkRecord(
                    userID: "u1", identity: second, mappedProperties: [:], session: Self.session("s3"),
                    businessToken: "tfb-1"), now: Self.now)
            guard case .linked(let user) = outcome else {
                Issue.record("\(name): \(outcome)")
                return
            }
            let opened = try await store.isSessionActive(id: "s3")
            #expect(user.identities.count == 2 && opened, "\(name)")
        }
    }
}
