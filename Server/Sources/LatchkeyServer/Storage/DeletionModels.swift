import Foundation
import LatchkeyAPI

/// What a deployment does with a provider's data-deletion request (`LATCHKEY_DATA_DELETION_POLICY`).
package enum DeletionPolicy: String, Sendable, CaseIterable {
    /// The user when the provider's identity was their only way in; otherwise the identity and
    /// the properties its provider wrote.
    case delete
    /// The identity and the properties its provider wrote, never the user.
    case unlink
    /// Nothing until an operator approves (then as `delete`) or refuses it with a reason.
    case queue
}

/// Where a data-deletion request is, as its public status page shows it.
package enum DeletionStatus: String, Sendable, CaseIterable {
    /// Received; waiting for an operator's review (`queue`).
    case received
    /// Being carried out by the background jobs.
    case inProgress = "in_progress"
    /// Carried out (or nothing was held).
    case done
    /// An operator refused it, with a reason the person can read.
    case refused
}

/// A provider's data-deletion request as it arrives (`LatchkeyStore.receiveDeletionRequest`).
package struct NewDeletionRequest: Sendable, Equatable {
    /// A random id for operators (`latchkey deletions approve ID`).
    package var id: String
    /// The confirmation code the provider shows the person; the key of the public status page.
    package var code: String
    /// `facebook`.
    package var provider: String
    /// The identity's subject (Facebook's app-scoped user id).
    package var subject: String
    /// The app whose callback received it.
    package var appID: String
    /// The deployment's policy when it arrived; a `queue` request, once approved, runs as `delete`.
    package var policy: DeletionPolicy
    /// The properties the provider writes (its field mapping's targets): removed with the identity.
    package var propertyKeys: [String]
    /// Facts for the audit event (the request's `issued_at`): never a token.
    package var detail: [String: JSONValue]
    /// When the provider issued it: an identity first seen after it is not what it is about.
    package var issuedAt: Date
    /// The request's own key (the hash of its signature), spent when it is received so that the
    /// same request delivered again is recognised, until `replayKeyExpiresAt`.
    package var replayKey: String
    /// When the replay key may be forgotten: once the request is too old to be accepted.
    package var replayKeyExpiresAt: Date

    /// Creates a request.
    package init(
        id: String, code: String, provider: String, subject: String, appID: String, policy: DeletionPolicy,
        propertyKeys: [String], detail: [String: JSONValue] = [:], issuedAt: Date = .distantFuture,
        replayKey: String? = nil, replayKeyExpiresAt: Date = .distantPast
    ) {
        self.issuedAt = issuedAt
        self.replayKey = replayKey ?? "request:" + id
        self.replayKeyExpiresAt = replayKeyExpiresAt
        self.id = id
        self.code = code
        self.provider = provider
        self.subject = subject
        self.appID = appID
        self.policy = policy
        self.propertyKeys = propertyKeys
        self.detail = detail
    }
}

/// A data-deletion request as the store holds it.
package struct StoredDeletionRequest: Sendable, Equatable {
    /// The operators' id.
    package var id: String
    /// The confirmation code (status page).
    package var code: String
    /// The identity's provider.
    package var provider: String
    /// The identity's subject.
    package var subject: String
    /// The app whose callback received it.
    package var appID: String
    /// The user holding the identity when it arrived; `nil` when Latchkey held nothing.
    package var userID: String?
    /// The policy it runs under.
    package var policy: DeletionPolicy
    /// The properties removed with the identity.
    package var propertyKeys: [String]
    /// Where it is.
    package var status: DeletionStatus
    /// An operator's reason for refusing it, shown on the status page.
    package var reason: String?
    /// Once done: whether anything was held (and so deleted).
    package var heldData: Bool?
    /// When it arrived.
    package var createdAt: Date
    /// When its status last changed.
    package var updatedAt: Date

    /// Creates a stored request.
    package init(
        id: String, code: String, provider: String, subject: String, appID: String, userID: String?,
        policy: DeletionPolicy, propertyKeys: [String], status: DeletionStatus, reason: String?, heldData: Bool?,
        createdAt: Date, updatedAt: Date
    ) {
        self.propertyKeys = propertyKeys
        self.id = id
        self.code = code
        self.provider = provider
        self.subject = subject
        self.appID = appID
        self.userID = userID
        self.policy = policy
        self.status = status
        self.reason = reason
        self.heldData = heldData
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// An operator's decision on a queued request (`LatchkeyStore.decideDeletionRequest`).
package enum DeletionDecision: Sendable, Equatable {
    /// Carry it out, as `delete`.
    case approve
    /// Refuse it, with a reason the person reads on the status page.
    case refuse(reason: String)
    /// Queue its job again: a request in progress whose job gave up (`deletion.failed`).
    case retry

    /// Whether it applies to a request in `status`: approving and refusing only a request
    /// waiting for review, retrying only one in progress.
    package func applies(to status: DeletionStatus) -> Bool {
        switch self {
        case .approve, .refuse: status == .received
        case .retry: status == .inProgress
        }
    }

    /// The status a request has once the decision went through: a request returned in another
    /// was not waiting for it, and nothing changed.
    package var decidedStatus: DeletionStatus {
        switch self {
        case .approve, .retry: .inProgress
        case .refuse: .refused
        }
    }

    /// The longest refusal reason, in characters (the person reads it on the status page).
    package static let maximumReason = 500

    /// `text` as a refusal reason: trimmed, 1 to `maximumReason` characters of plain text (no
    /// control characters but line breaks); `nil` when it is not one.
    package static func reason(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= maximumReason,
            !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" })
        else { return nil }
        return trimmed
    }
}
