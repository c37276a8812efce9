import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Each verdict's effect on every backend (`Verdicts`): the refusal a store throws, and that a
/// refused sign-in leaves nothing behind, whichever refusals apply at once.
extension StoreContractTests {
    static func limitedLogin(
        subject: String, userID: String, sessionID: String, jti: String, nonce: String? = nil
    ) -> LoginRecord {
        var login = Self.login(subject: subject, userID: userID, sessionID: sessionID)
        login.singleUse = SingleUseClaims(
            jti: jti, jtiExpiresAt: now.addingTimeInterval(600), serverNonce: nonce)
        return login
    }

    /// What `signIn` threw, or `nil` when it signed in.
    static func refusal(
        _ store: any LatchkeyStore, _ login: LoginRecord, now: Date = now
    ) async throws
        -> SignInConflict?
    {
        do {
            _ = try await store.signIn(login, now: now)
            return nil
        } catch let conflict as SignInConflict {
            return conflict
        }
    }

    @Test("a disabled person's replayed id token is a replay on every backend, and spends nothing")
    func disabledAndReplayed() async throws {
        try await Self.onEveryBackend { name, store in
            let first = Self.limitedLogin(subject: "d", userID: "u", sessionID: "s1", jti: "j1")
            #expect(try await Self.refusal(store, first) == nil, "\(name)")
            try await store.setUserDisabled(id: "u", disabled: true, now: Self.now, by: .commandLine)
            // The same token again: a replay first, whoever the person is.
            #expect(
                try await Self.refusal(store, Self.limitedLogin(subject: "d", userID: "u", sessionID: "s2", jti: "j1"))
                    == .replayed, "\(name)")
            // A fresh token of the disabled person: refused as disabled, and its jti left unspent.
            #expect(
                try await Self.refusal(store, Self.limitedLogin(subject: "d", userID: "u", sessionID: "s3", jti: "j2"))
                    == .userDisabled, "\(name)")
            try await store.setUserDisabled(id: "u", disabled: false, now: Self.now, by: .commandLine)
            #expect(
                try await Self.refusal(store, Self.limitedLogin(subject: "d", userID: "u", sessionID: "s4", jti: "j2"))
                    == nil, "\(name)")
            // Refusals opened no session.
            for session in ["s2", "s3"] {
                #expect(try await !store.isSessionActive(id: session), "\(name): \(session)")
            }
            #expect(try await store.isSessionActive(id: "s4"), "\(name)")
        }
    }

    @Test("with a server nonce: a replay before the nonce, the nonce before a disabled user, nothing spent")
    func refusalOrderWithNonce() async throws {
        try await Self.onEveryBackend { name, store in
            let expires = Self.now.addingTimeInterval(300)
            try await store.storeNonce("n1", expiresAt: expires, now: Self.now)
            #expect(
                try await Self.refusal(
                    store, Self.limitedLogin(subject: "p", userID: "u", sessionID: "s1", jti: "j1", nonce: "n1"))
                    == nil,
                "\(name)")
            try await store.setUserDisabled(id: "u", disabled: true, now: Self.now, by: .commandLine)
            try await store.storeNonce("n2", expiresAt: expires, now: Self.now)
            // Spent jti, spent nonce, disabled user: the replay.
            #expect(
                try await Self.refusal(
                    store, Self.limitedLogin(subject: "p", userID: "u", sessionID: "s2", jti: "j1", nonce: "n1"))
                    == .replayed, "\(name)")
            // Fresh jti, spent nonce, disabled user: the nonce.
            #expect(
                try await Self.refusal(
                    store, Self.limitedLogin(subject: "p", userID: "u", sessionID: "s3", jti: "j2", nonce: "n1"))
                    == .nonceInvalid, "\(name)")
            // Fresh jti, live nonce, disabled user: disabled, and neither the jti nor the nonce spent.
            #expect(
                try await Self.refusal(
                    store, Self.limitedLogin(subject: "p", userID: "u", sessionID: "s4", jti: "j2", nonce: "n2"))
                    == .userDisabled, "\(name)")
            try await store.setUserDisabled(id: "u", disabled: false, now: Self.now, by: .commandLine)
            #expect(
                try await Self.refusal(
                    store, Self.limitedLogin(subject: "p", userID: "u", sessionID: "s5", jti: "j2", nonce: "n2"))
                    == nil,
                "\(name)")
            // An unknown nonce for a new person: refused, and no user made.
            #expect(
                try await Self.refusal(
                    store, Self.limitedLogin(subject: "new", userID: "u-new", sessionID: "s6", jti: "j3", nonce: "nope")
                )
                    == .nonceInvalid, "\(name)")
            #expect(try await store.user(id: "u-new") == nil, "\(name)")
        }
    }

    @Test("a code presented again after a refusal changes nothing; after a redemption it revokes")
    func codeVerdictEffects() async throws {
        try await Self.onEveryBackend { name, store in
            func signIn(_ subject: String, code: String) async throws {
                var login = Self.login(subject: subject, userID: "u-\(subject)", sessionID: "unused-\(subject)")
                login.session = nil
                login.authorizationCode = NewAuthorizationCode(
                    hash: Data(code.utf8), clientID: "app", redirectURI: "app://cb", codeChallenge: "c",
                    sessionID: "from-\(code)", scope: ["openid"], expiresAt: Self.now.addingTimeInterval(60))
                _ = try await store.signIn(login, now: Self.now)
            }
            func present(_ code: String, challenge: String = "c", as session: String) async throws -> CodeRedemption {
                try await store.redeemAuthorizationCode(
                    CodePresentation(
                        hash: Data(code.utf8), clientID: "app", redirectURI: "app://cb", codeChallenge: challenge),
                    session: NewSession(
                        id: "ignored", refreshTokenHash: Data(session.utf8), createdAt: Self.now,
                        refreshExpiresAt: Self.now.addingTimeInterval(3600)),
                    now: Self.now)
            }
            try await signIn("a", code: "code-a")
            #expect(try await present("code-a", challenge: "wrong", as: "t1") == .invalid, "\(name)")
            #expect(try await present("code-a", as: "t2") == .invalid, "\(name)")
            #expect(try await !store.isSessionActive(id: "from-code-a"), "\(name)")
            try await signIn("b", code: "code-b")
            #expect(
                try await present("code-b", as: "t3")
                    == .issued(sessionID: "from-code-b", userID: "u-b", scope: ["openid"]),
                "\(name)")
            #expect(try await present("code-b", as: "t4") == .reused, "\(name)")
            #expect(try await !store.isSessionActive(id: "from-code-b"), "\(name)")
        }
    }

    @Test("concurrent refreshes of one token: one rotates; the others are reuses, or retries within the window")
    func concurrentRefreshes() async throws {
        try await Self.onEveryBackend { name, store in
            for window in [0.0, 30] {
                let session = "race-\(Int(window))"
                _ = try await store.signIn(
                    Self.login(subject: session, userID: "u-\(session)", sessionID: session), now: Self.now)
                let later = Self.now.addingTimeInterval(5)
                let outcomes = try await withThrowingTaskGroup(of: RefreshOutcome.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            // Every caller derives the same successor, as servers do from the token.
                            try await store.rotateRefreshToken(
                                hash: Data(session.utf8), newHash: Data("\(session)-next".utf8), now: later,
                                newExpiresAt: later.addingTimeInterval(3600), retryWindow: window,
                                retryCandidates: [Data("\(session)-next".utf8)])
                        }
                    }
                    return try await group.reduce(into: [RefreshOutcome]()) { $0.append($1) }
                }
                let rotated = outcomes.filter {
                    $0 == .rotated(sessionID: session, userID: "u-\(session)", assurance: .init(method: .guest))
                }
                #expect(rotated.count == 1, "\(name), window \(window): \(outcomes)")
                let others = outcomes.filter {
                    $0 != .rotated(sessionID: session, userID: "u-\(session)", assurance: .init(method: .guest))
                }
                if window == 0 {
                    // The first reuse revokes the session; later ones find it ended.
                    #expect(others.contains(.reused(sessionID: session)), "\(name): \(outcomes)")
                    #expect(
                        others.allSatisfy { $0 == .reused(sessionID: session) || $0 == .invalid },
                        "\(name): \(outcomes)")
                    #expect(try await !store.isSessionActive(id: session), "\(name)")
                } else {
                    let retried = RefreshOutcome.retried(
                        sessionID: session, userID: "u-\(session)", successorHash: Data("\(session)-next".utf8),
                        assurance: .init(method: .guest))
                    #expect(others.allSatisfy { $0 == retried }, "\(name): \(outcomes)")
                    #expect(try await store.isSessionActive(id: session), "\(name)")
                }
            }
        }
    }

    @Test("a code redeemed by several callers at once opens one session, and the others revoke it")
    func concurrentRedemptions() async throws {
        try await Self.onEveryBackend { name, store in
            var login = Self.login(subject: "c", userID: "u-c", sessionID: "unused")
            login.session = nil
            login.authorizationCode = NewAuthorizationCode(
                hash: Data("code".utf8), clientID: "app", redirectURI: "app://cb", codeChallenge: "c",
                sessionID: "from-code", scope: [], expiresAt: Self.now.addingTimeInterval(60))
            _ = try await store.signIn(login, now: Self.now)
            let outcomes = try await withThrowingTaskGroup(of: CodeRedemption.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await store.redeemAuthorizationCode(
                            CodePresentation(
                                hash: Data("code".utf8), clientID: "app", redirectURI: "app://cb", codeChallenge: "c"),
                            session: NewSession(
                                id: "ignored", refreshTokenHash: Data("t\(index)".utf8), createdAt: Self.now,
                                refreshExpiresAt: Self.now.addingTimeInterval(3600)),
                            now: Self.now)
                    }
                }
                return try await group.reduce(into: [CodeRedemption]()) { $0.append($1) }
            }
            #expect(
                outcomes.filter { $0 == .issued(sessionID: "from-code", userID: "u-c", scope: []) }.count == 1,
                "\(name): \(outcomes)")
            #expect(outcomes.filter { $0 == .reused }.count == 7, "\(name): \(outcomes)")
            #expect(try await !store.isSessionActive(id: "from-code"), "\(name)")
        }
    }
}
