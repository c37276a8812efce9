import ArgumentParser
import Foundation
import LatchkeyServer
import Testing

@testable import LatchkeyCLI

/// `latchkey deletions`: an operator's review of queued data-deletion requests, on either backend.
@Suite("latchkey deletions")
struct DeletionsCommandTests {
    static func deletions(_ arguments: [String], database: String) async throws {
        var command = try #require(
            try DeletionsCommand.parseAsRoot(
                arguments + ["--database-url", database, "--config", TestPostgres.commandSettings])
                as? any AsyncParsableCommand)
        try await command.run()
    }

    static func queued(_ id: String, subject: String) -> NewDeletionRequest {
        NewDeletionRequest(
            id: id, code: "code-\(id)", provider: "facebook", subject: subject, appID: "1", policy: .queue,
            propertyKeys: ["name"])
    }

    @Test("approve queues the deletion; refuse keeps the reason; unknown ids and decided requests change nothing")
    func review() async throws {
        try await UsersCommandTests.onEveryBackend { name, database, store in
            _ = try await store.signIn(
                StoreContractTests.login(subject: "other", userID: "u2", sessionID: "o"), now: UsersCommandTests.now)
            _ = try await store.receiveDeletionRequest(Self.queued("r1", subject: "s"), now: UsersCommandTests.now)
            _ = try await store.receiveDeletionRequest(Self.queued("r2", subject: "other"), now: UsersCommandTests.now)
            try await Self.deletions(["list", "--status", "all"], database: database)
            try await Self.deletions(["list", "--json"], database: database)

            try await Self.deletions(["approve", "r1"], database: database)
            #expect(try await store.deletionRequest(id: "r1")?.status == .inProgress, "\(name)")
            try await Self.deletions(["refuse", "r2", "--reason", "  We must keep invoices.  "], database: database)
            let refused = try await store.deletionRequest(id: "r2")
            #expect(refused?.status == .refused && refused?.reason == "We must keep invoices.", "\(name)")

            await #expect("\(name)") { try await Self.deletions(["approve", "r2"], database: database) } throws: {
                "\($0)".contains("refused, not waiting for review; nothing changed")
            }
            #expect(try await store.deletionRequest(id: "r2")?.status == .refused, "\(name)")
            await #expect("\(name)") { try await Self.deletions(["approve", "nope"], database: database) } throws: {
                "\($0)".contains("no data-deletion request has the id \"nope\"")
            }
            for reason in ["", "   ", String(repeating: "x", count: 501), "bell\u{7}"] {
                #expect(throws: (any Error).self, "\(name)") {
                    try DeletionsCommand.parseAsRoot(["refuse", "r1", "--reason", reason, "--database-url", database])
                }
            }
            #expect(throws: (any Error).self) {
                try DeletionsCommand.parseAsRoot(["list", "--status", "maybe", "--database-url", database])
            }
            // A request in progress whose job gave up is queued again; nothing else is.
            let jobs = try await store.claimJobs(
                now: UsersCommandTests.now, leaseUntil: UsersCommandTests.now + 60, limit: 10)
            for job in jobs {
                try await store.finishJob(id: job.id, outcome: .gaveUp(nil), now: UsersCommandTests.now)
            }
            try await Self.deletions(["retry", "r1"], database: database)
            #expect(
                try await store.claimJobs(now: UsersCommandTests.now, leaseUntil: UsersCommandTests.now + 60, limit: 10)
                    .map(\.kind) == [.dataDeletion], "\(name)")
            await #expect("\(name)") { try await Self.deletions(["retry", "r2"], database: database) } throws: {
                "\($0)".contains("refused, not in progress")
            }
            // The events say who decided.
            let events = try await store.auditEvents(userID: "u", limit: 5).map(\.event.type)
            #expect(events.prefix(3) == [.deletionApproved, .deletionApproved, .deletionRequested], "\(name)")
        }
    }
}
