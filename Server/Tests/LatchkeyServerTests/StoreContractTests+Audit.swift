import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The audit log on every backend: what each operation records, in its own transaction, and how a
/// user's events read back.
extension StoreContractTests {
    @Test("sign-ins, disabling, enabling and ending every session are audit events, newest first, per user")
    func auditEvents() async throws {
        try await Self.onEveryBackend { (name: String, store: any LatchkeyStore) async throws in
            let first = Self.login(subject: "a", userID: "u", sessionID: "s1")
            _ = try await store.signIn(first, now: Self.now)
            _ = try await store.signIn(Self.login(subject: "a", userID: "x", sessionID: "s2"), now: Self.now)
            _ = try await store.signIn(Self.login(subject: "b", userID: "other", sessionID: "s3"), now: Self.now)
            #expect(try await store.revokeSessions(userID: "u", now: Self.now, by: .user) == 2, "\(name)")
            _ = try await store.signIn(Self.login(subject: "a", userID: "x", sessionID: "s4"), now: Self.now)
            #expect(
                try await store.setUserDisabled(id: "u", disabled: true, now: Self.now, by: .commandLine) == 1,
                "\(name)")
            #expect(
                try await store.setUserDisabled(id: "u", disabled: false, now: Self.now, by: .commandLine) == 0,
                "\(name)")

            let events = try await store.auditEvents(userID: "u", limit: 10)
            #expect(
                events.map(\.event) == [
                    .userState(disabled: false, userID: "u", by: .commandLine, sessionsEnded: 0),
                    .userState(disabled: true, userID: "u", by: .commandLine, sessionsEnded: 1),
                    StorageRules.signInEvent(first, userID: "u", created: false),
                    .sessionsRevoked(userID: "u", by: .user, sessionsEnded: 2),
                    StorageRules.signInEvent(first, userID: "u", created: false),
                    StorageRules.signInEvent(first, userID: "u", created: true),
                ], "\(name)")
            #expect(events.allSatisfy { $0.at == Self.now }, "\(name)")
            #expect(
                try await store.auditEvents(userID: "u", limit: 2).map(\.event) == Array(events.map(\.event).prefix(2)))
            #expect(try await store.auditEvents(userID: "other", limit: 10).map(\.event.type) == [.userCreated])
        }
    }

    @Test("ending the sessions of nobody records nothing; disabling nobody answers nil and records nothing")
    func auditOfNobody() async throws {
        try await Self.onEveryBackend { (name: String, store: any LatchkeyStore) async throws in
            #expect(try await store.revokeSessions(userID: "nobody", now: Self.now, by: .commandLine) == 0, "\(name)")
            #expect(
                try await store.setUserDisabled(id: "nobody", disabled: true, now: Self.now, by: .commandLine) == nil,
                "\(name)")
            #expect(try await store.auditEvents(userID: "nobody", limit: 10).isEmpty, "\(name)")
            #expect(try await store.schemaVersion() > 0, "\(name): a migrated store says so")
        }
    }
}

extension StoreContractTests {
    @Test("each event keeps where it came from; pages follow each other by id, whatever the backend")
    func auditContextAndPages() async throws {
        try await Self.onEveryBackend { (name: String, store: any LatchkeyStore) async throws in
            let phone = AuditContext(node: "node-a", client: Self.phone)
            // The sign-in statement (one round trip on PostgreSQL) and a plain insert both carry it.
            try await AuditContext.$current.withValue(phone) {
                _ = try await store.signIn(Self.login(subject: "a", userID: "u", sessionID: "s1"), now: Self.now)
                try await store.endSession(id: "s1", userID: "u", now: Self.now, signOut: true)
            }
            for index in 0..<5 {
                _ = try await store.signIn(
                    Self.login(subject: "a", userID: "u", sessionID: "p\(index)"), now: Self.now.addingTimeInterval(1))
            }
            let all = try await store.auditEvents(userID: "u", limit: 100)
            #expect(all.count == 7, "\(name)")
            #expect(all.suffix(2).allSatisfy { $0.context == phone }, "\(name)")
            #expect(all.first?.context == AuditContext(node: nil, client: .unknown), "\(name)")
            #expect(zip(all, all.dropFirst()).allSatisfy { $0.id > $1.id }, "\(name): newest first")
            // Paging by the last id seen gives every event once, in order.
            var paged: [RecordedAuditEvent] = []
            var cursor: Int64?
            repeat {
                let page = try await store.auditEvents(userID: "u", before: cursor, limit: 3)
                paged += page
                cursor = page.count == 3 ? page.last?.id : nil
            } while cursor != nil
            #expect(paged == all, "\(name)")
            #expect(
                all.last?.event
                    == StorageRules.signInEvent(
                        Self.login(subject: "a", userID: "u", sessionID: "s1"), userID: "u", created: true), "\(name)")
        }
    }
}

/// docs/audit.md, the list operators and app developers read, names every event the server records.
@Suite("Audit log documentation")
struct AuditDocumentationTests {
    @Test("docs/audit.md lists every audit event type")
    func everyKindDocumented() throws {
        let text = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/audit.md"), encoding: .utf8)
        let missing = AuditEvent.Kind.allCases.map(\.rawValue).filter { !text.contains("`\($0)`") }
        #expect(missing.isEmpty, "not in docs/audit.md: \(missing)")
    }
}
