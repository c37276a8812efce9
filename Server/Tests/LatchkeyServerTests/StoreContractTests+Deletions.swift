import Foundation
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The storage contract of providers' data-deletion requests: received once per identity however
/// many arrive together, carried out once however often the job runs, decided only while waiting.
extension StoreContractTests {
    static func deletion(_ id: String, subject: String, policy: DeletionPolicy) -> NewDeletionRequest {
        NewDeletionRequest(
            id: id, code: "code-\(id)", provider: "facebook", subject: subject, appID: "1", policy: policy,
            propertyKeys: ["name"])
    }

    @Test("concurrent requests for one identity store one; a repeat answers it until it was carried out")
    func deletionRequestsOnce() async throws {
        try await Self.onEveryBackend { name, store in
            _ = try await store.signIn(
                Self.login(subject: "s", userID: "u", sessionID: "a", mapped: ["name": "Ann", "theme": "dark"]),
                now: Self.now)
            let codes = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await store.receiveDeletionRequest(
                            Self.deletion("r\(index)", subject: "s", policy: .delete), now: Self.now
                        ).code
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(codes.count == 1, "\(name): \(codes)")
            let code = try #require(codes.first)
            let request = try #require(try await store.deletionRequest(code: code))
            #expect(request.status == .inProgress && request.userID == "u", "\(name)")
            #expect(try await store.claimJobs(now: Self.now, leaseUntil: Self.now + 60, limit: 10).count == 1)

            // The job may run twice (a crash between its work and its end): the second changes nothing.
            let done = try await store.carryOutDeletionRequest(id: request.id, now: Self.now)
            #expect(done?.status == .done && done?.heldData == true, "\(name)")
            #expect(try await store.user(id: "u") == nil, "\(name): Facebook was the only way in")
            #expect(try await store.carryOutDeletionRequest(id: request.id, now: Self.now) == done, "\(name)")
            // Nothing held any more: the same code. Signed in again: a new request.
            #expect(
                try await store.receiveDeletionRequest(
                    Self.deletion("again", subject: "s", policy: .delete), now: Self.now
                )
                .code == request.code, "\(name)")
            _ = try await store.signIn(Self.login(subject: "s", userID: "u2", sessionID: "b"), now: Self.now)
            let fresh = try await store.receiveDeletionRequest(
                Self.deletion("fresh", subject: "s", policy: .unlink), now: Self.now)
            #expect(fresh.id == "fresh" && fresh.code != request.code, "\(name)")
            _ = try await store.carryOutDeletionRequest(id: "fresh", now: Self.now)
            let kept = try await store.user(id: "u2")
            #expect(
                kept?.identities.isEmpty == true && kept?.properties["name"] == nil, "\(name): unlink keeps the user")
            // Only a request waiting for review is decided.
            #expect(
                try await store.decideDeletionRequest(id: "fresh", .approve, now: Self.now, by: .commandLine)?.status
                    == .done, "\(name)")
            #expect(
                try await store.decideDeletionRequest(id: "none", .approve, now: Self.now, by: .commandLine) == nil,
                "\(name)")
        }
    }
}

extension StoreContractTests {
    @Test("under `queue`, a request about nobody held is carried out at once, without an operator")
    func queueNothingHeld() async throws {
        try await Self.onEveryBackend { name, store in
            let request = try await store.receiveDeletionRequest(
                Self.deletion("nobody", subject: "unknown", policy: .queue), now: Self.now)
            #expect(request.status == .inProgress && request.userID == nil, "\(name)")
            let done = try await store.carryOutDeletionRequest(id: "nobody", now: Self.now)
            #expect(done?.status == .done && done?.heldData == false, "\(name)")
        }
    }
}
