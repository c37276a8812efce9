import Foundation
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import Testing

/// The Easy Login part of the storage contract: sealed states' single use, the pending requests
/// earlier releases parked, and authorization codes.
extension StoreContractTests {
    static func pending(_ handle: String, expiresAt: Date) -> PendingAuthorization {
        PendingAuthorization(
            handleHash: Data(handle.utf8), clientID: "app", redirectURI: "app://cb", clientState: "s",
            codeChallenge: "c", permissions: ["public_profile", "email"], fieldsMapping: ["email": "email"],
            facebookAppID: "1", facebookCodeVerifier: "v", expiresAt: expiresAt)
    }

    static func codeLogin(subject: String, code: String, sessionID: String, expiresAt: Date) -> LoginRecord {
        var login = Self.login(subject: subject, userID: "user-\(subject)", sessionID: "unused")
        login.session = nil
        login.authorizationCode = NewAuthorizationCode(
            hash: Data(code.utf8), clientID: "app", redirectURI: "app://cb", codeChallenge: "challenge",
            sessionID: sessionID, scope: ["email", "public_profile"], expiresAt: expiresAt)
        return login
    }

    static func presentation(_ code: String, challenge: String = "challenge") -> CodePresentation {
        CodePresentation(hash: Data(code.utf8), clientID: "app", redirectURI: "app://cb", codeChallenge: challenge)
    }

    static func newSession(_ refresh: String) -> NewSession {
        NewSession(
            id: "ignored", refreshTokenHash: Data(refresh.utf8), createdAt: now,
            refreshExpiresAt: now.addingTimeInterval(3600))
    }

    @Test("a sealed state's use is recorded once, by whichever of many callbacks arrives first, until it expires")
    func stateUse() async throws {
        try await Self.onEveryBackend { name, store in
            // `EasyLoginService.stateUseKind`, and a use key as `SealedRequest` makes it.
            let kind = "easy_login_state"
            let use = Base64URL.encode(Data(repeating: 7, count: 32))
            let expiry = Self.now.addingTimeInterval(600)
            let firsts = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<16 {
                    group.addTask { try await store.useOnce(kind: kind, value: use, expiresAt: expiry, now: Self.now) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(firsts == 1, "\(name)")
            // Still spent a moment before the request expires (a state is refused once expired anyway).
            let late = expiry.addingTimeInterval(-1)
            #expect(try await !store.useOnce(kind: kind, value: use, expiresAt: expiry, now: late), "\(name)")
            // Another kind's value of the same text is another record.
            #expect(try await store.useOnce(kind: "jti", value: use, expiresAt: expiry, now: Self.now), "\(name)")
        }
    }

    @Test("a pending Easy Login request is taken once, expired or not; expired ones never count")
    func pendingAuthorizations() async throws {
        try await Self.onEveryBackend { name, store in
            let request = Self.pending("h1", expiresAt: Self.now.addingTimeInterval(600))
            #expect(try await store.savePendingAuthorization(request, now: Self.now, limit: 10))
            #expect(try await store.takePendingAuthorization(handleHash: Data("h1".utf8)) == request, "\(name)")
            #expect(try await store.takePendingAuthorization(handleHash: Data("h1".utf8)) == nil, "\(name)")

            let stale = Self.pending("h2", expiresAt: Self.now.addingTimeInterval(-10))
            _ = try await store.savePendingAuthorization(stale, now: Self.now, limit: 10)
            #expect(try await store.takePendingAuthorization(handleHash: Data("h2".utf8)) == stale, "\(name)")

            // An expired request never counts toward the cap, pruned yet or not (before, expired
            // requests counted until pruned an hour later: 10,000 anonymous calls locked Easy Login).
            _ = try await store.savePendingAuthorization(stale, now: Self.now, limit: 10)
            #expect(
                try await store.savePendingAuthorization(
                    Self.pending("h2b", expiresAt: Self.now.addingTimeInterval(600)), now: Self.now, limit: 1),
                "\(name)")
            #expect(
                try await !store.savePendingAuthorization(
                    Self.pending("h2c", expiresAt: Self.now.addingTimeInterval(600)), now: Self.now, limit: 1),
                "\(name)")
            _ = try await store.takePendingAuthorization(handleHash: Data("h2b".utf8))
            let later = Self.now.addingTimeInterval(7200)
            #expect(
                try await store.savePendingAuthorization(
                    Self.pending("h3", expiresAt: later.addingTimeInterval(600)), now: later, limit: 1), "\(name)")
            #expect(
                try await !store.savePendingAuthorization(
                    Self.pending("h3b", expiresAt: later.addingTimeInterval(600)), now: later, limit: 1), "\(name)")
            #expect(try await store.takePendingAuthorization(handleHash: Data("h2".utf8)) == stale, "\(name)")

            // The public endpoint cannot grow the table past the limit; nothing is stored beyond it
            // (h3 still waits, so one more fits under 2).
            #expect(
                try await store.savePendingAuthorization(
                    Self.pending("h4", expiresAt: Self.now.addingTimeInterval(60)), now: Self.now, limit: 2))
            #expect(
                try await !store.savePendingAuthorization(
                    Self.pending("h5", expiresAt: Self.now.addingTimeInterval(60)), now: Self.now, limit: 2))
            #expect(try await store.takePendingAuthorization(handleHash: Data("h5".utf8)) == nil, "\(name)")
        }
    }

    @Test("a sign-in with a code opens no session; redeeming opens the promised one, once")
    func codeRedemption() async throws {
        try await Self.onEveryBackend { name, store in
            let expires = Self.now.addingTimeInterval(60)
            _ = try await store.signIn(
                Self.codeLogin(subject: "s", code: "code-1", sessionID: "promised", expiresAt: expires), now: Self.now)
            #expect(try await !store.isSessionActive(id: "promised"), "\(name)")

            let issued = try await store.redeemAuthorizationCode(
                Self.presentation("code-1"), session: Self.newSession("r1"), now: Self.now)
            #expect(issued == .issued(sessionID: "promised", userID: "user-s", scope: ["email", "public_profile"]))
            #expect(try await store.isSessionActive(id: "promised"), "\(name)")
            let rotated = try await store.rotateRefreshToken(
                hash: Data("r1".utf8), newHash: Data("r2".utf8), now: Self.now, newExpiresAt: expires)
            #expect(
                rotated == .rotated(sessionID: "promised", userID: "user-s", assurance: .init(method: .guest)),
                "\(name)")

            // Replay: refused, and the session it opened ends.
            let replay = try await store.redeemAuthorizationCode(
                Self.presentation("code-1"), session: Self.newSession("r3"), now: Self.now)
            #expect(replay == .reused, "\(name)")
            #expect(try await !store.isSessionActive(id: "promised"), "\(name)")
            #expect(
                try await store.redeemAuthorizationCode(
                    Self.presentation("unknown"), session: Self.newSession("r4"), now: Self.now) == .invalid)
        }
    }

    @Test("a code presented with the wrong binding, or late, is spent without opening anything")
    func codeBindings() async throws {
        try await Self.onEveryBackend { name, store in
            let expires = Self.now.addingTimeInterval(60)
            _ = try await store.signIn(
                Self.codeLogin(subject: "s", code: "c1", sessionID: "s1", expiresAt: expires), now: Self.now)
            let wrong = try await store.redeemAuthorizationCode(
                Self.presentation("c1", challenge: "other"), session: Self.newSession("r1"), now: Self.now)
            #expect(wrong == .invalid, "\(name)")
            let right = try await store.redeemAuthorizationCode(
                Self.presentation("c1"), session: Self.newSession("r2"), now: Self.now)
            #expect(right == .invalid, "\(name)")
            #expect(try await !store.isSessionActive(id: "s1"), "\(name)")

            _ = try await store.signIn(
                Self.codeLogin(subject: "s", code: "c2", sessionID: "s2", expiresAt: expires), now: Self.now)
            let late = try await store.redeemAuthorizationCode(
                Self.presentation("c2"), session: Self.newSession("r3"), now: expires.addingTimeInterval(1))
            #expect(late == .invalid, "\(name)")

            _ = try await store.signIn(
                Self.codeLogin(subject: "s", code: "c3", sessionID: "s3", expiresAt: expires), now: Self.now)
            try await store.setUserDisabled(id: "user-s", disabled: true, now: Self.now, by: .commandLine)
            let disabled = try await store.redeemAuthorizationCode(
                Self.presentation("c3"), session: Self.newSession("r4"), now: Self.now)
            #expect(disabled == .userDisabled, "\(name)")
            #expect(try await !store.isSessionActive(id: "s3"), "\(name)")
        }
    }
}

extension StoreContractTests {
    @Test("activeUser reads the user only through one of their active sessions")
    func activeUser() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "s1", userID: "u1", sessionID: "a"), now: Self.now)
            _ = try await store.signIn(Self.login(subject: "s2", userID: "u2", sessionID: "b"), now: Self.now)
            #expect(try await store.activeUser(id: "u1", sessionID: "a")?.id == "u1", "\(name)")
            #expect(try await store.activeUser(id: "u1", sessionID: "b") == nil, "\(name)")  // someone else's session
            try await store.revokeSession(id: "a", now: Self.now)
            #expect(try await store.activeUser(id: "u1", sessionID: "a") == nil, "\(name)")
            try await store.setUserDisabled(id: "u2", disabled: true, now: Self.now, by: .commandLine)
            #expect(try await store.activeUser(id: "u2", sessionID: "b") == nil, "\(name)")
        }
    }
}
