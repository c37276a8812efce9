import ArgumentParser
import Foundation
import LatchkeyAPI
import LatchkeyServer

/// `latchkey deletions`: the operator's side of `LATCHKEY_DATA_DELETION_POLICY=queue`, on the
/// database `serve` uses (either backend), while servers run. An approval queues the deletion
/// job, which a server runs; a refusal's reason is what the person reads on the request's page.
struct DeletionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deletions", abstract: "List Facebook's data-deletion requests; approve or refuse queued ones.",
        subcommands: [List.self, Approve.self, Refuse.self, Retry.self])

    /// The longest reason kept: a few sentences for a person to read.

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the requests, oldest first: id, status, when, the user, the reason of a refusal.")

        @Option(help: "received (waiting for review), in_progress, done, refused, or all.")
        var status = "received"

        @Option(help: "The most requests printed.")
        var limit = 100

        @Flag(help: "Print JSON instead of text.")
        var json = false

        @OptionGroup var options: KeysCommand.DatabaseOptions

        mutating func validate() throws {
            guard status == "all" || DeletionStatus(rawValue: status) != nil else {
                throw ValidationError("--status must be received, in_progress, done, refused or all")
            }
            guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 10000") }
        }

        mutating func run() async throws {
            let (filter, limit, json) = (DeletionStatus(rawValue: status), limit, json)
            let configuration = try options.configuration(checkingKeyProtection: false)
            let requests = try await options.withStore(configuration) { store in
                try await store.deletionRequests(status: filter, limit: limit)
            }
            if json {
                print(String(decoding: JSONValue.array(requests.map(DeletionsCommand.json)).encoded(), as: UTF8.self))
            } else if requests.isEmpty {
                print("No \(filter.map { "\($0.rawValue) " } ?? "")data-deletion request.")
            } else {
                print(requests.map(DeletionsCommand.describe).joined(separator: "\n"))
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Approve a queued request: it is carried out as `delete` by the servers' background jobs.")

        @Argument(help: "The request's id (from `latchkey deletions list`).")
        var id: String

        @OptionGroup var options: KeysCommand.DatabaseOptions

        mutating func run() async throws {
            let request = try await DeletionsCommand.decide(id, .approve, options)
            print("Request \(request.id) is \(request.status.rawValue.replacingOccurrences(of: "_", with: " ")).")
        }
    }

    struct Refuse: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Refuse a queued request; the person reads the reason on the request's status page.")

        @Argument(help: "The request's id (from `latchkey deletions list`).")
        var id: String

        @Option(help: "Why, in words the person can read (shown on the status page; at most 500 characters).")
        var reason: String

        @OptionGroup var options: KeysCommand.DatabaseOptions

        mutating func validate() throws {
            guard DeletionDecision.reason(reason) != nil else {
                throw ValidationError(
                    "--reason must be 1 to \(DeletionDecision.maximumReason) characters of plain text")
            }
        }

        mutating func run() async throws {
            let reason = DeletionDecision.reason(reason) ?? reason
            let request = try await DeletionsCommand.decide(id, .refuse(reason: reason), options)
            print("Request \(request.id) is \(request.status.rawValue).")
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Queue a request in progress again, after its job gave up (a `deletion.failed` event): the servers carry it out."
        )

        @Argument(help: "The request's id (from `latchkey deletions list --status in_progress`).")
        var id: String

        @OptionGroup var options: KeysCommand.DatabaseOptions

        mutating func run() async throws {
            let request = try await DeletionsCommand.decide(id, .retry, options)
            print("Request \(request.id) is queued again.")
        }
    }

    /// Applies `decision` to a request waiting for review; refuses an unknown id, and one that is
    /// not waiting (changing nothing).
    static func decide(
        _ id: String, _ decision: DeletionDecision, _ options: KeysCommand.DatabaseOptions
    ) async throws -> StoredDeletionRequest {
        let configuration = try options.configuration(checkingKeyProtection: false)
        let request = try await options.withStore(configuration) { store in
            try await store.decideDeletionRequest(id: id, decision, now: Date(), by: .commandLine)
        }
        guard let request else {
            throw CommandError(
                "no data-deletion request has the id \(UsersCommand.quoted(id)) in "
                    + "\(StoreOpening.displayName(configuration)); `latchkey deletions list --status all` shows them.")
        }
        guard request.status == decision.decidedStatus else {
            let expected = decision == .retry ? "in progress" : "waiting for review"
            throw CommandError("request \(request.id) is \(request.status.rawValue), not \(expected); nothing changed.")
        }
        return request
    }

    /// A request as one line of text.
    static func describe(_ request: StoredDeletionRequest) -> String {
        var line =
            "\(request.id)  \(request.status.rawValue)  received \(DeletionStatusPage.stamp(request.createdAt))  "
            + "\(request.provider) \(request.subject)  user \(request.userID ?? "(none held)")  policy \(request.policy.rawValue)"
        if let held = request.heldData, request.status == .done { line += held ? "  deleted" : "  nothing held" }
        if let reason = request.reason { line += "  reason: \(reason)" }
        return line
    }

    /// A request as JSON.
    static func json(_ request: StoredDeletionRequest) -> JSONValue {
        [
            "id": .string(request.id), "status": .string(request.status.rawValue),
            "provider": .string(request.provider), "subject": .string(request.subject),
            "app_id": .string(request.appID),
            "user_id": request.userID.map(JSONValue.string) ?? .null, "policy": .string(request.policy.rawValue),
            "reason": request.reason.map(JSONValue.string) ?? .null,
            "held_data": request.heldData.map(JSONValue.bool) ?? .null,
            "created_at": .int(Int(request.createdAt.timeIntervalSince1970)),
            "updated_at": .int(Int(request.updatedAt.timeIntervalSince1970)),
        ]
    }
}
