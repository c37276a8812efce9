import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The storage contract of "where you're signed in": what each way of opening a session records,
/// the list of active sessions, and ending one.
extension StoreContractTests {
    static let phone = ClientInfo(address: "203.0.113.7", userAgent: "MyApp/3.1 CFNetwork/1490 Darwin/23.2.0")
    static let laptop = ClientInfo(address: "2001:db8:1:2::5", userAgent: "Mozilla/5.0 (Macintosh) Safari/605.1")

    @Test("each way in records how, by which identity and from which client; a rotation records the refresh")
    func sessionOrigins() async throws {
        try await Self.onEveryBackend { name, store in
            var login = Self.login(subject: "s1", userID: "u1", sessionID: "classic")
            login.session?.method = .classic
            login.session?.client = Self.phone
            _ = try await store.signIn(login, now: Self.now)
            // Easy Login: the code keeps the identity; the redemption's client opens the session.
            let code = Self.codeLogin(
                subject: "s1", code: "code-1", sessionID: "easy", expiresAt: Self.now.addingTimeInterval(60))
            _ = try await store.signIn(code, now: Self.now.addingTimeInterval(1))
            var redeeming = Self.newSession("easy-refresh")
            redeeming.method = .easyLogin
            redeeming.client = Self.laptop
            redeeming.createdAt = Self.now.addingTimeInterval(2)
            _ = try await store.redeemAuthorizationCode(Self.presentation("code-1"), session: redeeming, now: Self.now)
            // A guest has no identity.
            var guestSession = Self.session("guest", at: Self.now.addingTimeInterval(3))
            guestSession.client = Self.laptop
            _ = try await store.createGuest(id: "g1", session: guestSession, now: Self.now)

            let sessions = try await store.sessions(userID: "u1", now: Self.now, limit: 10)
            #expect(sessions.map(\.id) == ["easy", "classic"], "\(name): newest first")
            #expect(
                sessions.last
                    == StoredSession(
                        id: "classic", createdAt: Self.now, refreshedAt: nil,
                        expiresAt: Self.now.addingTimeInterval(3600),
                        method: .classic, provider: "facebook", subject: "s1", client: Self.phone), "\(name)")
            #expect(sessions.first?.method == .easyLogin && sessions.first?.subject == "s1", "\(name)")
            #expect(sessions.first?.client == Self.laptop, "\(name)")
            let guest = try await store.sessions(userID: "g1", now: Self.now, limit: 10)
            #expect(guest.map(\.method) == [.guest] && guest.first?.provider == nil, "\(name)")

            let later = Self.now.addingTimeInterval(120)
            _ = try await store.rotateRefreshToken(
                hash: Data("classic".utf8), newHash: Data("classic-2".utf8), now: later,
                newExpiresAt: later.addingTimeInterval(3600))
            let refreshed = try await store.sessions(userID: "u1", now: later, limit: 10).first { $0.id == "classic" }
            #expect(refreshed?.refreshedAt == later, "\(name)")
            #expect(refreshed?.expiresAt == later.addingTimeInterval(3600), "\(name)")
        }
    }

    @Test("the list holds only active sessions, at most the limit; ending one is the user's own only, and audited")
    func endingSessions() async throws {
        try await Self.onEveryBackend { name, store in
            for (index, id) in ["a", "b", "c"].enumerated() {
                var login = Self.login(subject: "s1", userID: "u1", sessionID: id)
                login.session?.createdAt = Self.now.addingTimeInterval(Double(index))
                _ = try await store.signIn(login, now: Self.now)
            }
            _ = try await store.signIn(Self.login(subject: "s2", userID: "u2", sessionID: "other"), now: Self.now)
            #expect(try await store.sessions(userID: "u1", now: Self.now, limit: 2).map(\.id) == ["c", "b"], "\(name)")

            #expect(try await !store.endSession(id: "other", userID: "u1", now: Self.now, signOut: false), "\(name)")
            #expect(try await store.isSessionActive(id: "other"), "\(name): another user's session is never touched")
            #expect(try await store.endSession(id: "b", userID: "u1", now: Self.now, signOut: false), "\(name)")
            #expect(try await !store.endSession(id: "b", userID: "u1", now: Self.now, signOut: false), "\(name)")
            #expect(try await store.endSession(id: "c", userID: "u1", now: Self.now, signOut: true), "\(name)")
            #expect(try await store.sessions(userID: "u1", now: Self.now, limit: 10).map(\.id) == ["a"], "\(name)")
            // Expired sessions are not listed, pruned yet or not.
            #expect(try await store.sessions(userID: "u1", now: Self.now.addingTimeInterval(3600), limit: 10).isEmpty)
            let events = try await store.auditEvents(userID: "u1", limit: 2).map(\.event)
            #expect(
                events == [
                    .sessionEnded("c", userID: "u1", signOut: true), .sessionEnded("b", userID: "u1", signOut: false),
                ], "\(name)")
            #expect(events.map(\.type) == [.sessionSignedOut, .sessionEnded], "\(name)")
        }
    }
}
