import ArgumentParser
import Foundation
import LatchkeyPostgres
import LatchkeySQLite
import LatchkeyServer
import Testing

@testable import LatchkeyCLI

/// `latchkey users`, run as an operator runs it (arguments parsed, settings read), on an SQLite
/// file and on PostgreSQL, against the store a server would use.
@Suite("latchkey users")
struct UsersCommandTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Runs `latchkey users ARGUMENTS --database-url URL`.
    static func users(_ arguments: [String], database: String) async throws {
        var command = try #require(
            try UsersCommand.parseAsRoot(
                arguments + ["--database-url", database, "--config", TestPostgres.commandSettings])
                as? any AsyncParsableCommand)
        try await command.run()
    }

    /// A user `u` with two open sessions, on the store, and `body` given the database's URL.
    static func onEveryBackend(_ body: (String, String, any LatchkeyStore) async throws -> Void) async throws {
        func seed(_ store: any LatchkeyStore) async throws {
            for session in ["a", "b"] {
                _ = try await store.signIn(
                    StoreContractTests.login(subject: "s", userID: "u", sessionID: session, mapped: ["name": "Ann"]),
                    now: now)
            }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-users-\(UUID()).sqlite")
        defer { try? FileManager.default.removeItem(at: file) }
        let sqlite = try await SQLiteStore.open(.sqliteFile(file.path))
        do {
            try await sqlite.migrate()
            try await seed(sqlite)
            try await body("sqlite", file.path, sqlite)
        } catch {
            try await sqlite.close()
            throw error
        }
        try await sqlite.close()
        guard let base = try TestPostgres.url() else { return }
        try await TestPostgres.withSchema(base) { url in
            let store = try PostgresStore(
                url: url, poolSize: 2, timeout: TestPostgres.timeout, logger: TestPostgres.quiet)
            do {
                try await store.migrate()
                try await seed(store)
                try await body("postgres", PostgresStoreTests.text(url), store)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    @Test("revoke-sessions ends every session; disable ends them and refuses sign-ins; enable lets them back")
    func lifecycle() async throws {
        try await Self.onEveryBackend { (name: String, database: String, store: any LatchkeyStore) async throws in
            try await Self.users(["show", "u"], database: database)
            try await Self.users(["show", "u", "--json"], database: database)
            try await Self.users(["revoke-sessions", "u"], database: database)
            for session in ["a", "b"] { #expect(try await !store.isSessionActive(id: session), "\(name)") }
            #expect(try await store.user(id: "u")?.disabled == false, "\(name)")

            _ = try await store.signIn(
                StoreContractTests.login(subject: "s", userID: "u", sessionID: "c"), now: Self.now)
            try await Self.users(["disable", "u"], database: database)
            #expect(try await store.user(id: "u")?.disabled == true, "\(name)")
            #expect(try await !store.isSessionActive(id: "c"), "\(name)")
            await #expect(throws: SignInConflict.userDisabled, "\(name)") {
                try await store.signIn(
                    StoreContractTests.login(subject: "s", userID: "u", sessionID: "d"), now: Self.now)
            }

            try await Self.users(["enable", "u"], database: database)
            #expect(try await store.user(id: "u")?.disabled == false, "\(name)")
            #expect(try await !store.isSessionActive(id: "c"), "\(name): an ended session stays ended")
            _ = try await store.signIn(
                StoreContractTests.login(subject: "s", userID: "u", sessionID: "e"), now: Self.now)
            #expect(try await store.isSessionActive(id: "e"), "\(name)")

            // Each command left an audit event naming the command line and what it ended.
            let operatorEvents = try await store.auditEvents(userID: "u", limit: 50).map(\.event).filter {
                $0.detail.objectValue?["by"] != nil
            }
            #expect(
                operatorEvents == [
                    .userState(disabled: false, userID: "u", by: .commandLine, sessionsEnded: 0),
                    .userState(disabled: true, userID: "u", by: .commandLine, sessionsEnded: 1),
                    .sessionsRevoked(userID: "u", by: .commandLine, sessionsEnded: 2),
                ], "\(name)")
        }
    }

    @Test("a database that was never migrated is refused on either backend, and left empty")
    func unmigratedDatabase() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-empty-\(UUID()).sqlite")
        defer { try? FileManager.default.removeItem(at: file) }
        let sqlite = try await SQLiteStore.open(.sqliteFile(file.path))
        try await sqlite.close()
        let base = try TestPostgres.url()
        func check(_ name: String, _ database: String, _ store: any LatchkeyStore) async throws {
            for command in [["show", "u"], ["disable", "u"]] {
                await #expect("\(name): \(command)") {
                    try await Self.users(command, database: database)
                } throws: { error in
                    error is CommandError && "\(error)".contains("holds no Latchkey data")
                        && "\(error)".contains("LATCHKEY_DATABASE_URL")
                }
            }
            #expect(try await store.schemaVersion() == 0, "\(name): nothing was created")
        }
        let reopened = try await SQLiteStore.open(.sqliteFile(file.path))
        try await check("sqlite", file.path, reopened)
        try await reopened.close()
        guard let base else { return }
        try await TestPostgres.withSchema(base) { url in
            let store = try PostgresStore(
                url: url, poolSize: 1, timeout: TestPostgres.timeout, logger: TestPostgres.quiet)
            do {
                try await check("postgres", PostgresStoreTests.text(url), store)
                try await store.migrate()
                #expect(try await store.schemaVersion() > 0)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    @Test("reset-factors removes a user's factors and recovery codes: the next sign-in needs none")
    func resetFactors() async throws {
        try await Self.onEveryBackend { (name: String, database: String, store: any LatchkeyStore) async throws in
            try await StoreContractTests.userWithFactor(store, subject: "mfa")
            var held = StoreContractTests.login(subject: "mfa", userID: "ignored", sessionID: "held")
            held.challenge = StoreContractTests.challenge("reset")
            await #expect(throws: SecondFactorRequired(userID: "u-mfa"), "\(name)") {
                try await store.signIn(held, now: Self.now)
            }
            try await Self.users(["reset-factors", "u-mfa"], database: database)
            #expect(try await store.factors(userID: "u-mfa").isEmpty, "\(name)")
            #expect(try await store.recoveryCodesLeft(userID: "u-mfa") == 0, "\(name)")
            _ = try await store.signIn(
                StoreContractTests.login(subject: "mfa", userID: "ignored", sessionID: "open"), now: Self.now)
            #expect(try await store.isSessionActive(id: "open"), "\(name)")
            let removal = try await store.auditEvents(userID: "u-mfa", before: nil, limit: 10).first {
                $0.event.type == .factorRemoved
            }
            #expect(removal?.event.detail["by"] == "cli" && removal?.event.detail["factors_removed"] == 1, "\(name)")
            // Nothing left: a second reset changes nothing.
            try await Self.users(["reset-factors", "u-mfa"], database: database)
        }
    }

    @Test("an unknown id is refused with the id and where to find one, and changes nothing")
    func unknownID() async throws {
        try await Self.onEveryBackend { (name: String, database: String, store: any LatchkeyStore) async throws in
            for command in ["show", "disable", "enable", "revoke-sessions", "reset-factors"] {
                var refusal: (any Error)?
                do {
                    try await Self.users([command, "nobody here"], database: database)
                } catch {
                    refusal = error
                }
                let text = refusal.map { "\($0)" } ?? ""
                #expect(refusal is CommandError, "\(name): \(command)")
                #expect(text.contains("no user has the id \"nobody here\""), "\(name): \(command): \(text)")
                #expect(text.contains("GET /v1/users/me") && !text.contains("password"), "\(name): \(command)")
            }
            #expect(try await store.isSessionActive(id: "a"), "\(name)")
            #expect(try await store.user(id: "nobody here") == nil, "\(name)")
        }
    }

    @Test("a database that does not exist is refused, not created")
    func noDatabase() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-users-\(UUID())/db.sqlite")
            .path
        await #expect {
            try await Self.users(["disable", "u"], database: path)
        } throws: { "\($0)".contains("no database at \(path)") }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("show prints state, dates, properties and identities; JSON for scripts")
    func show() throws {
        let user = StoredUser(
            id: "u1", createdAt: Self.now, updatedAt: Self.now, disabled: true, properties: ["name": "Ann", "age": 30],
            identities: [
                StoredIdentity(
                    provider: "facebook", subject: "123", appID: "9", grantedPermissions: ["email"],
                    firstSeen: Self.now,
                    lastSeen: Self.now)
            ])
        let events = [
            RecordedAuditEvent(
                .userState(disabled: true, userID: "u1", by: .commandLine, sessionsEnded: 2), at: Self.now)
        ]
        let text = UsersCommand.describe(user, events: events)
        for part in [
            "User u1", "state:      disabled", "created:    2027-01-15T08:00:00Z", "age: 30", "name: \"Ann\"",
            "facebook 123 (app 9)", "permissions: email",
            #"2027-01-15T08:00:00Z user.disabled {"by":"cli","sessions_ended":2}"#,
        ] {
            #expect(text.contains(part), "\(part)")
        }
        let json =
            try JSONSerialization.jsonObject(with: Data(UsersCommand.json(user, events: events).utf8))
            as? [String: Any]
        #expect((json?["recentEvents"] as? [[String: Any]])?.first?["type"] as? String == "user.disabled")
        #expect(json?["id"] as? String == "u1" && json?["disabled"] as? Bool == true)
        #expect((json?["identities"] as? [[String: Any]])?.first?["subject"] as? String == "123")
    }
}
