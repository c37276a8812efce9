import Foundation
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import Testing

/// The storage contract of providers' refresh tokens and out-of-band events: every backend keeps
/// one token per identity and client, queues its revocation when the account or the identity
/// goes, and applies a provider's event as `Verdicts.providerEvent` decides, once per event id.
extension StoreContractTests {
    static func appleLogin(subject: String, userID: String, sessionID: String) -> LoginRecord {
        var login = login(subject: subject, userID: userID, sessionID: sessionID)
        login.identity.provider = "apple"
        login.identity.appID = "com.example.app"
        return login
    }

    static func token(_ subject: String, client: String, _ value: String) -> StoredProviderToken {
        StoredProviderToken(provider: "apple", subject: subject, clientID: client, token: Data(value.utf8))
    }

    static func event(
        _ kind: ProviderEvent.Kind, _ subject: String, id: String, at date: Date = now
    ) -> ProviderEvent {
        ProviderEvent(
            kind: kind, provider: "apple", subject: subject, eventID: id,
            eventIDExpiresAt: date.addingTimeInterval(86_400), detail: ["type": .string(kind.rawValue)])
    }

    @Test("a provider token per identity and client, replaced by the newest; deletion and unlink queue revocations")
    func providerTokens() async throws {
        try await Self.onEveryBackend { name, store in
            // Stored before the sign-in that follows it, as the server does.
            try await store.saveProviderToken(Self.token("a1", client: "com.example.app", "first"), now: Self.now)
            try await store.saveProviderToken(Self.token("a1", client: "com.example.app", "second"), now: Self.now)
            try await store.saveProviderToken(Self.token("a1", client: "com.example.web", "web"), now: Self.now)
            _ = try await store.signIn(Self.appleLogin(subject: "a1", userID: "u", sessionID: "s"), now: Self.now)
            let state = try #require(try await store.identityState(provider: "apple", subject: "a1"), "\(name)")
            #expect(state.userID == "u" && state.revokedAt == nil && !state.emailForwardingDisabled, "\(name)")
            #expect(state.tokenClientIDs == ["com.example.app", "com.example.web"], "\(name)")
            // Unlinking the Apple identity (a Facebook one stays) queues one revocation per stored token.
            _ = try await store.linkIdentity(
                LinkRecord(userID: "u", identity: Self.identity("f1"), mappedProperties: [:], provingSessionID: "s"),
                now: Self.now)
            _ = try await store.unlinkIdentity(
                userID: "u", sessionID: "s", provider: "apple", subject: "a1", now: Self.now,
                reauthenticationWindow: 600)
            #expect(try await store.identityState(provider: "apple", subject: "a1") == nil, "\(name)")
            let jobs = try await store.claimJobs(now: Self.now, leaseUntil: Self.now + 300, limit: 10)
            #expect(jobs.allSatisfy { $0.kind == .appleRevokeToken && $0.userID == "u" }, "\(name)")
            let revoked = jobs.compactMap { job -> String? in
                guard let token = job.payload["token"]?.stringValue.flatMap(Base64URL.decode) else { return nil }
                return "\(job.payload["client_id"]?.stringValue ?? ""):\(String(decoding: token, as: UTF8.self))"
            }.sorted()
            #expect(revoked == ["com.example.app:second", "com.example.web:web"], "\(name)")
            // Linked again with a new token, then the account is deleted: its tokens are revoked too.
            try await store.saveProviderToken(Self.token("a1", client: "com.example.app", "third"), now: Self.now)
            _ = try await store.linkIdentity(
                LinkRecord(
                    userID: "u", identity: Self.appleLogin(subject: "a1", userID: "", sessionID: "").identity,
                    mappedProperties: [:], provingSessionID: "s"), now: Self.now)
            try await store.deleteUser(id: "u", sessionID: "s", now: Self.now, reauthenticationWindow: 600)
            let after = try await store.claimJobs(now: Self.now + 1, leaseUntil: Self.now + 300, limit: 10)
            #expect(
                after.map(\.kind.rawValue).sorted() == ["apple.revoke_token", "facebook.revoke_permissions"], "\(name)")
            #expect(try await store.identityState(provider: "apple", subject: "a1") == nil, "\(name)")
        }
    }

    @Test("a provider's events apply once: consent revoked, email forwarding, account deleted")
    func providerEvents() async throws {
        try await Self.onEveryBackend { name, store in
            try await store.saveProviderToken(Self.token("a2", client: "com.example.app", "t"), now: Self.now)
            _ = try await store.signIn(Self.appleLogin(subject: "a2", userID: "u2", sessionID: "s1"), now: Self.now)
            _ = try await store.signIn(Self.appleLogin(subject: "a2", userID: "u2", sessionID: "s2"), now: Self.now)
            // Consent revoked: sessions end, tokens go, the identity is marked until its next token.
            let revoked = try await store.applyProviderEvent(
                Self.event(.consentRevoked, "a2", id: "e1"), now: Self.now)
            #expect(revoked == .applied(userID: "u2", userDeleted: false), "\(name)")
            #expect(try await store.isSessionActive(id: "s1") == false, "\(name)")
            #expect(try await store.isSessionActive(id: "s2") == false, "\(name)")
            var state = try #require(try await store.identityState(provider: "apple", subject: "a2"))
            #expect(state.revokedAt == Self.now && state.tokenClientIDs.isEmpty, "\(name)")
            #expect(
                try await store.applyProviderEvent(Self.event(.consentRevoked, "a2", id: "e1"), now: Self.now)
                    == .replayed, "\(name)")
            let event = try #require(try await store.auditEvents(userID: "u2", limit: 1).first?.event)
            #expect(event.type == .identityConsentRevoked && event.detail["sessions_ended"] == 2, "\(name)")
            try await store.saveProviderToken(Self.token("a2", client: "com.example.app", "t2"), now: Self.now)
            state = try #require(try await store.identityState(provider: "apple", subject: "a2"))
            #expect(state.revokedAt == nil, "\(name): a new token is a new consent")
            // Email forwarding.
            _ = try await store.applyProviderEvent(Self.event(.emailDisabled, "a2", id: "e2"), now: Self.now)
            #expect(try await store.identityState(provider: "apple", subject: "a2")?.emailForwardingDisabled == true)
            _ = try await store.applyProviderEvent(Self.event(.emailEnabled, "a2", id: "e3"), now: Self.now)
            #expect(try await store.identityState(provider: "apple", subject: "a2")?.emailForwardingDisabled == false)
            // Unknown people: nothing changes, the id is spent.
            #expect(
                try await store.applyProviderEvent(Self.event(.accountDeleted, "nobody", id: "e4"), now: Self.now)
                    == .unknownIdentity, "\(name)")
            #expect(
                try await store.applyProviderEvent(Self.event(.accountDeleted, "nobody", id: "e4"), now: Self.now)
                    == .replayed, "\(name)")
            // Account deleted with another way in left: only the identity goes.
            _ = try await store.signIn(Self.appleLogin(subject: "a2", userID: "x", sessionID: "s3"), now: Self.now)
            _ = try await store.linkIdentity(
                LinkRecord(userID: "u2", identity: Self.identity("f2"), mappedProperties: [:], provingSessionID: "s3"),
                now: Self.now)
            #expect(
                try await store.applyProviderEvent(Self.event(.accountDeleted, "a2", id: "e5"), now: Self.now)
                    == .applied(userID: "u2", userDeleted: false), "\(name)")
            #expect(try await store.user(id: "u2")?.identities.map(\.provider) == ["facebook"], "\(name)")
            #expect(try await store.isSessionActive(id: "s3") == false, "\(name)")
            // Account deleted and it was the only way in: the user goes, as a deletion does.
            _ = try await store.signIn(Self.appleLogin(subject: "a3", userID: "u3", sessionID: "s4"), now: Self.now)
            #expect(
                try await store.applyProviderEvent(Self.event(.accountDeleted, "a3", id: "e6"), now: Self.now)
                    == .applied(userID: "u3", userDeleted: true), "\(name)")
            #expect(try await store.user(id: "u3") == nil, "\(name)")
            let tombstone = try await store.auditEvents(userID: "u3", limit: 5).map(\.event)
            #expect(tombstone.map(\.type) == [.userDeleted] && tombstone.first?.detail == ["by": "provider"], "\(name)")
            // An event about no user is kept without one.
            try await store.recordEvent(
                AuditEvent(type: .providerEventRejected, userID: "", detail: ["reason": "signature"]), now: Self.now)
        }
    }

    @Test("a provider token whose identity never came is revoked and forgotten after its grace")
    func orphanTokens() async throws {
        try await Self.onEveryBackend { name, store in
            try await store.saveProviderToken(Self.token("kept", client: "com.example.app", "k"), now: Self.now)
            _ = try await store.signIn(Self.appleLogin(subject: "kept", userID: "u", sessionID: "s"), now: Self.now)
            try await store.saveProviderToken(Self.token("orphan", client: "com.example.app", "o"), now: Self.now)
            let early = try await store.prune(
                Self.cutoffs { $0.orphanProviderTokensBefore = Self.now }, limit: 100)
            #expect(early.orphanProviderTokens == 0, "\(name): within its grace")
            let report = try await store.prune(
                Self.cutoffs { $0.orphanProviderTokensBefore = Self.now + 1 }, limit: 100)
            #expect(report.orphanProviderTokens == 1, "\(name)")
            let jobs = try await store.claimJobs(now: Self.now + 2, leaseUntil: Self.now + 300, limit: 10)
            #expect(jobs.map(\.kind) == [.appleRevokeToken] && jobs.first?.payload["subject"] == "orphan", "\(name)")
            #expect(try await store.identityState(provider: "apple", subject: "kept")?.tokenClientIDs.count == 1)
            let again = try await store.prune(
                Self.cutoffs { $0.orphanProviderTokensBefore = Self.now + 1 }, limit: 100)
            #expect(again.orphanProviderTokens == 0, "\(name): forgotten")
        }
    }
}
