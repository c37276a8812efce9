import Foundation
import LatchkeyAPI
import LatchkeySQLite
import LatchkeyServer
import Testing

/// The storage contract every backend must meet: SQLite in memory and on disk, and PostgreSQL
/// (a fresh schema per test, on the cluster `scripts/test` starts) twice: with its one-statement
/// paths for hot operations, and with them off (`PostgresStore.fastPaths`), where every
/// operation reads its facts and then writes. Both must pass every case alike: a differential
/// test of the fast paths against the general ones.
@Suite("Storage contract")
struct StoreContractTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Runs `body` on each backend, migrated, closing it afterwards.
    static func onEveryBackend(_ body: (String, any LatchkeyStore) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: file) }
        for (name, location) in [
            ("sqlite-memory", DatabaseLocation.sqliteMemory), ("sqlite-file", .sqliteFile(file.path)),
        ] {
            let store = try await SQLiteStore.open(location)
            do {
                try await store.migrate()
                try await body(name, store)
            } catch {
                try await store.close()
                throw error
            }
            try await store.close()
        }
        if let url = try TestPostgres.url() {
            try await TestPostgres.withStore(url) { store in try await body("postgres", store) }
            try await TestPostgres.withStore(url, fastPaths: false) { store in
                try await body("postgres-general-paths", store)
            }
        }
    }

    static func login(
        subject: String, userID: String, sessionID: String, mapped: [String: JSONValue] = [:]
    ) -> LoginRecord {
        LoginRecord(
            identity: StoredIdentity(
                provider: "facebook", subject: subject, appID: "1", grantedPermissions: ["email"], firstSeen: now,
                lastSeen: now),
            mappedProperties: mapped, refreshProperties: true, newUserID: userID,
            session: NewSession(
                id: sessionID, refreshTokenHash: Data(sessionID.utf8), createdAt: now,
                refreshExpiresAt: now.addingTimeInterval(3600)))
    }

    @Test("sign-in creates once, finds after, merges refreshed properties")
    func signIn() async throws {
        try await Self.onEveryBackend { name, store in
            try await store.migrate()  // idempotent
            let first = try await store.signIn(
                Self.login(subject: "s1", userID: "u1", sessionID: "a", mapped: ["name": "A"]), now: Self.now)
            #expect(first.created && first.user.id == "u1", "\(name)")
            let second = try await store.signIn(
                Self.login(subject: "s1", userID: "ignored", sessionID: "b", mapped: ["email": "a@x"]), now: Self.now)
            #expect(!second.created && second.user.id == "u1", "\(name)")
            #expect(second.user.properties == ["name": "A", "email": "a@x"], "\(name)")
            #expect(second.user.identities.map(\.subject) == ["s1"], "\(name)")
            // What sign-in returns is what a read returns, field for field (dates, grants, properties).
            #expect(try await store.user(id: "u1") == second.user, "\(name)")
            let later = Self.now.addingTimeInterval(90)
            var third = Self.login(subject: "s1", userID: "ignored", sessionID: "c", mapped: ["email": "b@x"])
            third.identity.grantedPermissions = ["email", "public_profile"]
            let returned = try await store.signIn(third, now: later)
            #expect(try await store.user(id: "u1") == returned.user, "\(name)")
            #expect(returned.user.updatedAt == later && returned.user.identities.first?.lastSeen == later, "\(name)")
            #expect(returned.user.identities.first?.firstSeen == Self.now, "\(name)")
            #expect(returned.user.identities.first?.grantedPermissions == ["email", "public_profile"], "\(name)")
            let fresh = try await store.signIn(Self.login(subject: "s2", userID: "u2", sessionID: "d"), now: later)
            #expect(try await store.user(id: "u2") == fresh.user, "\(name)")
        }
    }

    @Test("concurrent first sign-ins of one subject create exactly one user")
    func concurrentSignIn() async throws {
        try await Self.onEveryBackend { name, store in
            let results = try await withThrowingTaskGroup(of: (StoredUser, Bool).self) { group in
                for index in 0..<16 {
                    group.addTask {
                        try await store.signIn(
                            Self.login(subject: "race", userID: "u\(index)", sessionID: "s\(index)"), now: Self.now)
                    }
                }
                return try await group.reduce(into: [(StoredUser, Bool)]()) { $0.append($1) }
            }
            #expect(Set(results.map(\.0.id)).count == 1, "\(name)")
            #expect(results.filter(\.1).count == 1, "\(name)")
        }
    }

    @Test("a failing sign-in leaves nothing behind")
    func atomicity() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "one", userID: "u1", sessionID: "dup"), now: Self.now)
            // Same session id: the session insert fails after the user insert; all must roll back.
            await #expect(throws: (any Error).self) {
                try await store.signIn(Self.login(subject: "two", userID: "u2", sessionID: "dup"), now: Self.now)
            }
            #expect(try await store.user(id: "u2") == nil, "\(name)")
            let retry = try await store.signIn(
                Self.login(subject: "two", userID: "u2", sessionID: "fresh"), now: Self.now)
            #expect(retry.created, "\(name)")
        }
    }

    @Test("refresh tokens rotate once; reuse revokes the session; expiry and revocation invalidate")
    func refreshRotation() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "s", userID: "u", sessionID: "sess"), now: Self.now)
            let later = Self.now.addingTimeInterval(10)
            let rotated = try await store.rotateRefreshToken(
                hash: Data("sess".utf8), newHash: Data("next".utf8), now: later,
                newExpiresAt: later.addingTimeInterval(3600))
            #expect(rotated == .rotated(sessionID: "sess", userID: "u", assurance: .init(method: .guest)), "\(name)")
            // Spent and fresh tokens both name their family; a token never issued names none.
            #expect(
                try await store.refreshTokenFamily(hash: Data("sess".utf8))
                    == RefreshTokenFamily(sessionID: "sess", spent: true), "\(name)")
            #expect(
                try await store.refreshTokenFamily(hash: Data("next".utf8))
                    == RefreshTokenFamily(sessionID: "sess", spent: false), "\(name)")
            #expect(try await store.refreshTokenFamily(hash: Data("never".utf8)) == nil, "\(name)")
            let reused = try await store.rotateRefreshToken(
                hash: Data("sess".utf8), newHash: Data("x".utf8), now: later, newExpiresAt: later)
            #expect(reused == .reused(sessionID: "sess"), "\(name)")
            #expect(
                try await store.refreshTokenFamily(hash: Data("next".utf8))
                    == RefreshTokenFamily(sessionID: "sess", spent: false, ended: true), "\(name)")
            #expect(try await !store.isSessionActive(id: "sess"), "\(name)")
            let afterRevoke = try await store.rotateRefreshToken(
                hash: Data("next".utf8), newHash: Data("y".utf8), now: later, newExpiresAt: later)
            #expect(afterRevoke == .invalid, "\(name)")

            _ = try await store.signIn(Self.login(subject: "s", userID: "u", sessionID: "sess2"), now: Self.now)
            let expired = try await store.rotateRefreshToken(
                hash: Data("sess2".utf8), newHash: Data("z".utf8), now: Self.now.addingTimeInterval(3601),
                newExpiresAt: Self.now)
            #expect(expired == .invalid, "\(name)")
            #expect(try await store.revokeSessions(userID: "u", now: Self.now, by: .commandLine) == 1, "\(name)")
        }
    }

    @Test(
        "a spent token whose successor is unused names it however late; one whose successor was used moments ago is refused; otherwise it revokes"
    )
    func refreshRetryWindow() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "s", userID: "u", sessionID: "sess"), now: Self.now)
            let at = Self.now.addingTimeInterval(10)
            let expires = at.addingTimeInterval(3600)
            func rotate(
                _ token: String, _ next: String, now: Date, window: TimeInterval = 10, candidates: [String],
                expiring: Date = expires
            )
                async throws -> RefreshOutcome
            {
                try await store.rotateRefreshToken(
                    hash: Data(token.utf8), newHash: Data(next.utf8), now: now, newExpiresAt: expiring,
                    retryWindow: window, retryCandidates: candidates.map { Data($0.utf8) })
            }
            #expect(
                try await rotate("sess", "next", now: at, window: 0, candidates: ["next"])
                    == .rotated(sessionID: "sess", userID: "u", assurance: .init(method: .guest)), "\(name)")
            // Retried: the stored successor among the candidates, nothing spent or revoked; moments
            // later, and (the app never saved the answer) long after the window.
            for when in [at.addingTimeInterval(5), at.addingTimeInterval(5), at.addingTimeInterval(3000)] {
                #expect(
                    try await rotate("sess", "other", now: when, candidates: ["x", "next"])
                        == .retried(
                            sessionID: "sess", userID: "u", successorHash: Data("next".utf8),
                            assurance: .init(method: .guest)), "\(name)")
            }
            #expect(
                try await store.refreshTokenFamily(hash: Data("next".utf8))
                    == RefreshTokenFamily(sessionID: "sess", spent: false), "\(name)")
            #expect(try await store.refreshTokenFamily(hash: Data("other".utf8)) == nil, "\(name)")
            // A successor the caller cannot name is no retry.
            #expect(
                try await rotate("sess", "y", now: at.addingTimeInterval(5), candidates: ["x"])
                    == .reused(sessionID: "sess"), "\(name)")
            #expect(try await !store.isSessionActive(id: "sess"), "\(name)")

            enum Successor { case unused, used, expired }
            let soon = at.addingTimeInterval(5)
            let cases: [(session: String, successor: Successor, at: Date, window: TimeInterval, expected: String)] = [
                ("late", .unused, at.addingTimeInterval(11), 10, "retried"),
                ("raced", .used, soon, 10, "superseded"),
                ("moved", .used, at.addingTimeInterval(11), 10, "reused"),
                ("off", .unused, soon, 0, "reused"),
                ("off-raced", .used, soon, 0, "reused"),
                ("gone", .unused, soon, 10, "invalid"),
                // The successor the retry would name has expired: no retry answers with a dead token.
                ("expired", .expired, soon, 10, "reused"),
                // A node whose clock lags the one that rotated cannot stretch the window by the lag.
                ("lagging", .used, at.addingTimeInterval(-15), 10, "reused"),
            ]
            for (session, successor, when, window, expected) in cases {
                _ = try await store.signIn(
                    Self.login(subject: session, userID: "u-\(session)", sessionID: session), now: Self.now)
                _ = try await rotate(
                    session, "\(session)-1", now: at, window: 0, candidates: [],
                    expiring: successor == .expired ? at.addingTimeInterval(1) : expires)
                if successor == .used {
                    _ = try await rotate("\(session)-1", "\(session)-2", now: at, window: 0, candidates: [])
                }
                if session == "gone" {
                    // Disabling revokes too; the retry must not answer for a revoked session.
                    _ = try await store.setUserDisabled(id: "u-\(session)", disabled: true, now: soon, by: .commandLine)
                }
                let outcome = try await rotate(session, "z", now: when, window: window, candidates: ["\(session)-1"])
                let wanted: RefreshOutcome =
                    switch expected {
                    case "retried":
                        .retried(
                            sessionID: session, userID: "u-\(session)", successorHash: Data("\(session)-1".utf8),
                            assurance: .init(method: .guest))
                    case "superseded": .superseded(sessionID: session)
                    case "reused": .reused(sessionID: session)
                    default: .invalid
                    }
                #expect(outcome == wanted, "\(name) \(session)")
                let alive = expected == "retried" || expected == "superseded"
                #expect(try await store.isSessionActive(id: session) == alive, "\(name) \(session)")
                // Nothing was spent or stored by a refusal or a retry.
                #expect(try await store.refreshTokenFamily(hash: Data("z".utf8)) == nil, "\(name) \(session)")
            }

            // A late retry marks the successor it hands out: handed out once more late, while its
            // own successor is unused (two holders taking turns), it revokes the session.
            _ = try await store.signIn(Self.login(subject: "turns", userID: "u-t", sessionID: "turns"), now: Self.now)
            _ = try await rotate("turns", "turns-1", now: at, window: 0, candidates: [])
            let late = at.addingTimeInterval(60)
            for _ in 0..<2 {
                #expect(
                    try await rotate("turns", "z", now: late, candidates: ["turns-1"])
                        == .retried(
                            sessionID: "turns", userID: "u-t", successorHash: Data("turns-1".utf8),
                            assurance: .init(method: .guest)), "\(name)")
            }
            _ = try await rotate("turns-1", "turns-2", now: late, window: 0, candidates: [])
            // Within the window of its own rotation, a retry of the marked token still works.
            #expect(
                try await rotate("turns-1", "z", now: late.addingTimeInterval(5), candidates: ["turns-2"])
                    == .retried(
                        sessionID: "turns", userID: "u-t", successorHash: Data("turns-2".utf8),
                        assurance: .init(method: .guest)), "\(name)")
            #expect(
                try await rotate("turns-1", "z", now: late.addingTimeInterval(60), candidates: ["turns-2"])
                    == .reused(sessionID: "turns"), "\(name) second late turn")
            #expect(try await !store.isSessionActive(id: "turns"), "\(name)")

            // A retry changes nothing, the window included: it still runs from the rotation.
            _ = try await store.signIn(Self.login(subject: "again", userID: "u-a", sessionID: "again"), now: Self.now)
            _ = try await rotate("again", "again-1", now: at, window: 0, candidates: [])
            #expect(
                try await rotate("again", "z", now: at.addingTimeInterval(9), candidates: ["again-1"])
                    == .retried(
                        sessionID: "again", userID: "u-a", successorHash: Data("again-1".utf8),
                        assurance: .init(method: .guest)), "\(name)")
            _ = try await rotate("again-1", "again-2", now: at.addingTimeInterval(9), window: 0, candidates: [])
            #expect(
                try await rotate("again", "z", now: at.addingTimeInterval(9.5), candidates: ["again-1"])
                    == .superseded(sessionID: "again"), "\(name)")
            #expect(
                try await rotate("again", "z", now: at.addingTimeInterval(11), candidates: ["again-1"])
                    == .reused(sessionID: "again"), "\(name) retry moved the window")
        }
    }

    @Test("single-use values, jtis and server nonces are spent once, atomically with the sign-in")
    func singleUse() async throws {
        try await Self.onEveryBackend { name, store in
            let expiry = Self.now.addingTimeInterval(60)
            #expect(try await store.useOnce(kind: "jti", value: "a", expiresAt: expiry, now: Self.now), "\(name)")
            #expect(try await !store.useOnce(kind: "jti", value: "a", expiresAt: expiry, now: Self.now), "\(name)")
            #expect(try await store.useOnce(kind: "other", value: "a", expiresAt: expiry, now: Self.now), "\(name)")
            try await store.storeNonce("n", expiresAt: expiry, now: Self.now)
            try await store.storeNonce("late", expiresAt: Self.now, now: Self.now)
            var login = Self.login(subject: "once", userID: "u1", sessionID: "s1")
            login.singleUse = SingleUseClaims(jti: "j1", jtiExpiresAt: expiry, serverNonce: "n")
            _ = try await store.signIn(login, now: Self.now)
            // The same jti again: refused, and nothing of the second login is written.
            var replay = Self.login(subject: "other", userID: "u2", sessionID: "s2")
            replay.singleUse = SingleUseClaims(jti: "j1", jtiExpiresAt: expiry, serverNonce: nil)
            await #expect(throws: SignInConflict.replayed) { try await store.signIn(replay, now: Self.now) }
            #expect(try await store.user(id: "u2") == nil, "\(name)")
            // A spent, unknown or expired server nonce: refused, and the jti stays unspent.
            for nonce in ["n", "made-up", "late"] {
                var spent = Self.login(subject: "other", userID: "u2", sessionID: "s3")
                spent.singleUse = SingleUseClaims(jti: "j2", jtiExpiresAt: expiry, serverNonce: nonce)
                await #expect(throws: SignInConflict.nonceInvalid) { try await store.signIn(spent, now: Self.now) }
            }
            var retry = Self.login(subject: "other", userID: "u2", sessionID: "s4")
            retry.singleUse = SingleUseClaims(jti: "j2", jtiExpiresAt: expiry, serverNonce: nil)
            #expect(try await store.signIn(retry, now: Self.now).created, "\(name)")
        }
    }

    @Test("a disabled user cannot sign in or refresh, and loses every session")
    func disabledUsers() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(Self.login(subject: "d", userID: "u", sessionID: "s1"), now: Self.now)
            #expect(
                try await store.setUserDisabled(id: "u", disabled: true, now: Self.now, by: .commandLine) == 1,
                "\(name)")
            #expect(
                try await store.setUserDisabled(id: "nobody", disabled: true, now: Self.now, by: .commandLine) == nil,
                "\(name)")
            #expect(try await !store.isSessionActive(id: "s1"), "\(name)")
            var login = Self.login(subject: "d", userID: "ignored", sessionID: "s2")
            login.singleUse = SingleUseClaims(
                jti: "jd", jtiExpiresAt: Self.now.addingTimeInterval(60), serverNonce: nil)
            await #expect(throws: SignInConflict.userDisabled) { try await store.signIn(login, now: Self.now) }
            #expect(try await !store.isSessionActive(id: "s2"), "\(name)")
            // The refused login spent nothing: after re-enabling, the same jti signs in.
            #expect(
                try await store.setUserDisabled(id: "u", disabled: false, now: Self.now, by: .commandLine) == 0,
                "\(name)")
            #expect(try await store.signIn(login, now: Self.now).user.id == "u", "\(name)")
            try await store.setUserDisabled(id: "u", disabled: true, now: Self.now, by: .commandLine)
            let rotated = try await store.rotateRefreshToken(
                hash: Data("s2".utf8), newHash: Data("n".utf8), now: Self.now,
                newExpiresAt: Self.now.addingTimeInterval(60))
            #expect(rotated == .invalid, "\(name)")  // its session was revoked when the user was disabled
            // Re-enabled: new sessions work again; old ones stay revoked.
            try await store.setUserDisabled(id: "u", disabled: false, now: Self.now, by: .commandLine)
            _ = try await store.signIn(Self.login(subject: "d", userID: "x", sessionID: "s3"), now: Self.now)
            #expect(try await store.isSessionActive(id: "s3"), "\(name)")
            #expect(try await !store.isSessionActive(id: "s2"), "\(name)")
        }
    }

    @Test("signing keys: newest first, adding retires the others")
    func signingKeys() async throws {
        try await Self.onEveryBackend { name, store in
            try await store.addSigningKey(
                StoredSigningKey(kid: "k1", privateKey: Data([1]), createdAt: Self.now, retiredAt: nil))
            let later = Self.now.addingTimeInterval(5)
            try await store.addSigningKey(
                StoredSigningKey(kid: "k2", privateKey: Data([2]), createdAt: later, retiredAt: nil))
            let keys = try await store.signingKeys()
            #expect(keys.map(\.kid) == ["k2", "k1"], "\(name)")
            #expect(keys[0].retiredAt == nil && keys[1].retiredAt == later, "\(name)")
        }
    }

    @Test("the first signing key is added once, whoever else tries at the same moment")
    func firstSigningKeyOnce() async throws {
        try await Self.onEveryBackend { name, store in
            let added = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        try await store.addFirstSigningKey(
                            StoredSigningKey(
                                kid: "k\(index)", privateKey: Data([UInt8(index)]), createdAt: Self.now, retiredAt: nil)
                        )
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(added == 1, "\(name)")
            #expect(try await store.signingKeys().count == 1, "\(name)")
            #expect(
                try await !store.addFirstSigningKey(
                    StoredSigningKey(kid: "late", privateKey: Data([9]), createdAt: Self.now, retiredAt: nil)),
                "\(name)")
        }
    }

    @Test("a returning sign-in merges its mapped properties again after a client changed them, unless not refreshing")
    func signInAfterUpdate() async throws {
        try await Self.onEveryBackend { name, store in
            let mapped: [String: JSONValue] = ["name": "A", "email": "a@x"]
            _ = try await store.signIn(
                Self.login(subject: "r", userID: "u", sessionID: "a", mapped: mapped), now: Self.now)
            // The same mapped properties again: nothing to merge, and the answer is what a read gives.
            let again = try await store.signIn(
                Self.login(subject: "r", userID: "ignored", sessionID: "b", mapped: mapped), now: Self.now)
            #expect(!again.created && again.user.properties == mapped, "\(name)")
            #expect(try await store.user(id: "u") == again.user, "\(name)")
            let later = Self.now.addingTimeInterval(60)
            _ = try await store.updateProperties(userID: "u", properties: ["name": "Mine", "email": .null], now: later)
            let merged = try await store.signIn(
                Self.login(subject: "r", userID: "ignored", sessionID: "c", mapped: mapped), now: later)
            #expect(merged.user.properties == mapped && merged.user.updatedAt == later, "\(name)")
            #expect(try await store.user(id: "u") == merged.user, "\(name)")
            // Not refreshing: the client's values stay.
            _ = try await store.updateProperties(userID: "u", properties: ["name": "Mine"], now: later)
            var kept = Self.login(subject: "r", userID: "ignored", sessionID: "d", mapped: mapped)
            kept.refreshProperties = false
            #expect(
                try await store.signIn(kept, now: later).user.properties == ["name": "Mine", "email": "a@x"], "\(name)")
            #expect(try await store.user(id: "u")?.properties == ["name": "Mine", "email": "a@x"], "\(name)")
            for session in ["a", "b", "c", "d"] {
                #expect(try await store.isSessionActive(id: session), "\(name) \(session)")
            }
        }
    }

    @Test("properties merge and null removes")
    func properties() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(
                Self.login(subject: "p", userID: "u", sessionID: "s", mapped: ["a": 1, "b": 2]), now: Self.now)
            let updated = try await store.updateProperties(
                userID: "u", properties: ["a": .null, "c": "x"], now: Self.now)
            #expect(updated?.properties == ["b": 2, "c": "x"], "\(name)")
            #expect(
                try await store.updateProperties(userID: "nobody", properties: [:], now: Self.now) == nil, "\(name)")
        }
    }
}
