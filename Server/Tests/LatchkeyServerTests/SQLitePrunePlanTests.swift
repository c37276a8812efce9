import Foundation
import LatchkeyServer
import Testing

@testable import LatchkeySQLite

/// Pruning finds its rows through indexes: a full scan would grow with the table it is meant to keep small.
@Suite("SQLite prune plans")
struct SQLitePrunePlanTests {
    @Test("every statement a prune runs searches an index; none scans a table")
    func indexed() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        try await store.migrate()
        let now = StoreContractTests.now
        _ = try await store.signIn(StoreContractTests.login(subject: "s", userID: "u", sessionID: "s"), now: now)
        _ = try await store.revokeSession(id: "s", now: now)
        _ = try await store.createGuest(id: "g", session: StoreContractTests.session("g"), now: now)
        // A provider token whose identity never came.
        try await store.saveProviderToken(
            StoreContractTests.token("orphan", client: "com.example.app", "t"), now: now.addingTimeInterval(-1))
        var configuration = ServerConfiguration()
        configuration.identities.anonymousUserLifetime = 60
        let known = try await store.database.run { Set($0.reprepareCounts.keys) }
        // Some of everything to delete, so that every statement runs (the session's ones only then).
        let report = try await store.prune(
            PruneCutoffs(now: now.addingTimeInterval(3600), configuration: configuration), limit: 10)
        #expect(report.sessions == 1 && report.refreshTokens == 1 && report.guests == 1)
        #expect(report.orphanProviderTokens == 1)
        let statements = try await store.database.run { Set($0.reprepareCounts.keys) }.subtracting(known)
            .filter { !$0.hasPrefix("SELECT changes()") && !$0.hasPrefix("BEGIN") && $0 != "COMMIT" }
        #expect(statements.count == 18, "\(statements.sorted())")
        for statement in statements {
            let plan = try await store.database.run { db in
                try db.query("EXPLAIN QUERY PLAN " + statement).compactMap { $0.column("detail")?.string }
            }
            #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(statement): \(plan)")
        }
        try await store.close()
    }
}
