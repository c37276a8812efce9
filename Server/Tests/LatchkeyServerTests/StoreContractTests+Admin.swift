import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The storage contract of what operators do: admin keys, finding users page by page, and the
/// changes only an operator makes, alike on every backend.
extension StoreContractTests {
    @Test("admin keys: stored by hash, listed newest first, revoked once; a call records its use and the key")
    func adminKeys() async throws {
        try await Self.onEveryBackend { name, store in
            let first = AdminKeySecret.generate()
            let second = AdminKeySecret.generate()
            let older = StoredAdminKey(id: first.id, name: "ops", hash: first.hash, createdAt: Self.now)
            let newer = StoredAdminKey(id: second.id, name: "grafana", hash: second.hash, createdAt: Self.now + 60)
            try await store.createAdminKey(older, by: .commandLine)
            try await store.createAdminKey(newer, by: .commandLine)
            #expect(try await store.adminKeys() == [newer, older], "\(name)")
            #expect(try await store.adminKey(id: first.id) == older, "\(name)")
            #expect(try await store.adminKey(id: "0000000000000000") == nil, "\(name)")
            #expect(first.matches(older) && !second.matches(older), "\(name)")

            _ = try await store.signIn(Self.login(subject: "s", userID: "u", sessionID: "a"), now: Self.now)
            var context = AuditContext(node: "n1", client: .unknown)
            context.adminKeyID = first.id
            try await AuditContext.$current.withValue(context) {
                try await store.recordAdminCall(
                    AuditEvent(type: .adminCall, userID: "u", detail: ["route": "/admin/v1/users/{id}"]),
                    keyID: first.id, now: Self.now + 120)
                // Whatever the call changes names the key too.
                _ = try await store.setUserDisabled(id: "u", disabled: true, now: Self.now + 120, by: .admin)
            }
            #expect(try await store.adminKey(id: first.id)?.lastUsedAt == Self.now + 120, "\(name)")
            let events = try await store.auditEvents(userID: "u", limit: 2)
            #expect(
                events.map(\.event.detail) == [
                    ["by": "admin", "sessions_ended": 1, "admin_key": .string(first.id)],
                    ["route": "/admin/v1/users/{id}", "admin_key": .string(first.id)],
                ], "\(name)")

            let revoked = try #require(try await store.revokeAdminKey(id: first.id, now: Self.now + 180, by: .admin))
            #expect(revoked.revokedAt == Self.now + 180, "\(name)")
            let again = try await store.revokeAdminKey(id: first.id, now: Self.now + 240, by: .admin)
            #expect(again?.revokedAt == Self.now + 180, "\(name): revoked once")
            #expect(try await store.revokeAdminKey(id: "0000000000000000", now: Self.now, by: .admin) == nil)

            // Console sign-outs: each moves the key's generation on by one, and touches nothing else.
            #expect(try await store.adminKey(id: second.id)?.consoleGeneration == 0, "\(name)")
            try await store.endConsoleSessions(keyID: second.id)
            try await store.endConsoleSessions(keyID: second.id)
            var signedOut = newer
            signedOut.consoleGeneration = 2
            #expect(try await store.adminKey(id: second.id) == signedOut, "\(name)")
            try await store.endConsoleSessions(keyID: "0000000000000000")
        }
    }

    /// Users `u0`…`u{count-1}`, created a second apart (`u0` oldest), each with identity `s<i>`.
    static func users(
        _ count: Int, _ store: any LatchkeyStore, properties: (Int) -> [String: JSONValue] = { _ in [:] }
    )
        async throws
    {
        for index in 0..<count {
            _ = try await store.signIn(
                Self.login(
                    subject: "s\(index)", userID: "u\(index)", sessionID: "session\(index)", mapped: properties(index)),
                now: Self.now + Double(index))
        }
    }

    @Test("users are paged newest first, every user once, whatever is deleted between two pages")
    func searchPages() async throws {
        try await Self.onEveryBackend { name, store in
            try await Self.users(7, store)
            var seen: [String] = []
            var cursor: UserCursor?
            repeat {
                let page = try await store.searchUsers(.all, after: cursor, limit: 3)
                seen += page.map(\.id)
                cursor = page.count == 3 ? page.last.map(UserCursor.init(after:)) : nil
                // The cursor's user is deleted before the next page: it still continues after it.
                if let last = page.last, last.id == "u4" {
                    #expect(try await store.deleteUser(id: "u4", now: Self.now, by: .admin), "\(name)")
                }
            } while cursor != nil
            #expect(seen == ["u6", "u5", "u4", "u3", "u2", "u1", "u0"], "\(name)")
            let second = try #require(try await store.user(id: "u1"))
            let readBack = try #require(UserCursor(UserCursor(after: second).text))
            #expect(
                try await store.searchUsers(.all, after: readBack, limit: 10).map(\.id) == ["u0"],
                "\(name): a cursor read back from its text")
        }
    }

    @Test("a property search reads a window of users at a time, and says where to go on")
    func propertyWindows() async throws {
        try await Self.onEveryBackend { name, store in
            try await Self.users(30, store) { [3, 17, 25].contains($0) ? ["tier": "gold"] : [:] }
            /// Every page, walked as the admin API walks them.
            func walk(_ value: String, limit: Int, scanning: Int) async throws -> [[String]] {
                var pages: [[String]] = []
                var cursor: UserCursor?
                repeat {
                    let page = try await store.searchUsers(
                        .property(name: "tier", value: value), after: cursor, limit: limit, scanning: scanning)
                    pages.append(page.users.map(\.id))
                    cursor = page.users.count == limit ? page.users.last.map(UserCursor.init(after:)) : page.resumeAfter
                } while cursor != nil && pages.count < 10
                return pages
            }
            // Ten users a window: u29…u20, u19…u10, u9…u0, and nothing after the last.
            #expect(try await walk("gold", limit: 5, scanning: 10) == [["u25"], ["u17"], ["u3"]], "\(name)")
            #expect(try await walk("silver", limit: 5, scanning: 10) == [[], [], []], "\(name)")
            // A full page ends the window early; the next goes on after its last user.
            #expect(try await walk("gold", limit: 1, scanning: 30) == [["u25"], ["u17"], ["u3"], []], "\(name)")
            #expect(try await walk("gold", limit: 5, scanning: 30) == [["u25", "u17", "u3"]], "\(name)")
        }
    }

    @Test("a term finds a user by id, identity subject or email (ASCII case-insensitive); a property by name=value")
    func searchTerms() async throws {
        try await Self.onEveryBackend { name, store in
            try await Self.users(4, store) { index in
                [
                    "email": .string(index == 2 ? "Ann.Lee@Example.COM" : "user\(index)@example.com"),
                    "country": .string(index.isMultiple(of: 2) ? "DE" : "FR"), "age": .int(40 + index),
                    "beta": .bool(index == 3), "note": .string("42"),
                ]
            }
            func found(_ search: UserSearch) async throws -> [String] {
                try await store.searchUsers(search, after: nil, limit: 10).map(\.id)
            }
            #expect(try await found(.term("u1")) == ["u1"], "\(name): by id")
            #expect(try await found(.term("s3")) == ["u3"], "\(name): by subject")
            #expect(try await found(.term("ann.lee@example.com")) == ["u2"], "\(name): by email, any case")
            #expect(try await found(.term("ANN.LEE@EXAMPLE.COM")) == ["u2"], "\(name)")
            #expect(try await found(.term("nobody")).isEmpty, "\(name)")
            #expect(try await found(.property(name: "country", value: "DE")) == ["u2", "u0"], "\(name)")
            #expect(try await found(.property(name: "age", value: "41")) == ["u1"], "\(name): a number")
            #expect(try await found(.property(name: "beta", value: "true")) == ["u3"], "\(name): a boolean")
            #expect(
                try await found(.property(name: "note", value: "42")) == ["u3", "u2", "u1", "u0"],
                "\(name): the text 42 too")
            #expect(try await found(.property(name: "missing", value: "x")).isEmpty, "\(name)")
            #expect(
                try await store.searchUsers(
                    .property(name: "country", value: "DE"), after: UserCursor(id: "u2", createdAt: Self.now + 2),
                    limit: 10
                ).map(\.id) == ["u0"], "\(name)")
        }
    }

    @Test("an operator deletes a user as an account deletion does, and unlinks any identity but a user's last")
    func operatorChanges() async throws {
        try await Self.onEveryBackend { name, store in
            var first = Self.login(subject: "a", userID: "u", sessionID: "s1")
            first.session?.method = .classic
            _ = try await store.signIn(first, now: Self.now)
            var apple = Self.login(subject: "b", userID: "unused", sessionID: "s2")
            apple.identity.provider = "apple"
            let link = LinkRecord(
                userID: "u", identity: apple.identity, mappedProperties: [:], provingSessionID: "s1",
                session: apple.session)
            #expect(try await store.linkIdentity(link, now: Self.now) != .conflict(owner: "u"), "\(name)")
            await #expect(throws: IdentityRefusal.notLinked) {
                try await store.removeIdentity(userID: "u", provider: "facebook", subject: "zzz", now: Self.now)
            }
            await #expect(throws: IdentityRefusal.sessionEnded) {
                try await store.removeIdentity(userID: "nobody", provider: "facebook", subject: "a", now: Self.now)
            }
            let after = try await store.removeIdentity(userID: "u", provider: "apple", subject: "b", now: Self.now)
            #expect(after.identities.map(\.subject) == ["a"], "\(name)")
            #expect(try await store.isSessionActive(id: "s1"), "\(name): a session the identity did not open stays")
            #expect(try await !store.isSessionActive(id: "s2"), "\(name): the identity's session ended")
            await #expect(throws: IdentityRefusal.lastSignInMethod) {
                try await store.removeIdentity(userID: "u", provider: "facebook", subject: "a", now: Self.now)
            }
            #expect(try await store.auditEvents(userID: "u", limit: 1).first?.event.type == .identityUnlinked)

            #expect(try await store.deleteUser(id: "u", now: Self.now, by: .admin), "\(name)")
            #expect(try await store.user(id: "u") == nil, "\(name)")
            #expect(
                try await store.auditEvents(userID: "u", limit: 5).map(\.event) == [.deleted(userID: "u", by: .admin)])
            #expect(try await !store.deleteUser(id: "u", now: Self.now, by: .admin), "\(name)")
        }
    }
}
