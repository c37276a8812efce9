import Foundation
import LatchkeyAPI

/// `GET /v1/users/me/events`: the person's own security history, as account pages show it:
/// newest first, a page at a time, with the network and the browser or app of each request,
/// never the address, the user agent or anything a token could be rebuilt from.
struct SecurityEventsService: Sendable {
    let store: any LatchkeyStore

    /// Events per page unless `limit` says otherwise, and the most a page holds.
    static let defaultLimit = 20
    static let maximumLimit = 100

    /// The detail keys a person is shown; everything else stays in the operator's log. A reason
    /// only where it was written for them: an operator's refusal of their deletion request (a
    /// failed job's reason is a diagnostic for operators).
    static let shownDetails: Set<String> = [
        "method", "sessions_ended", "by", "outcome", "policy", "request_id", "session_id", "type", "app_id",
        "factor_id", "purpose", "recovery_codes_left", "recovery_codes_issued", "failures", "until",
    ]

    /// What a provider's request records: its client is the provider's server, not the person's,
    /// so the person is shown none (the operator's log keeps it).
    static let providerInitiated: Set<AuditEvent.Kind> = [
        .identityConsentRevoked, .identityProviderAccountDeleted, .identityEmailDisabled, .identityEmailEnabled,
        .deletionRequested,
    ]

    /// A page of `claims`' user's events, older than `cursor` when given.
    /// - Throws: `invalid_request` for a cursor or limit that is not one this API gives.
    func page(_ claims: SessionTokens.AccessClaims, cursor: String?, limit: String?) async throws -> SecurityEventsBody
    {
        let size =
            try limit.map { text in
                guard let value = Int(text), (1...Self.maximumLimit).contains(value) else {
                    throw APIError.invalidRequest("limit must be 1 to \(Self.maximumLimit).")
                }
                return value
            } ?? Self.defaultLimit
        let before = try cursor.map { text in
            guard text.utf8.count <= 20, let value = Int64(text), value > 0 else {
                throw APIError.invalidRequest("cursor must be a nextCursor this endpoint gave.")
            }
            return value
        }
        // One more than the page: whether an older page exists, without a count.
        let events = try await store.auditEvents(userID: claims.userID, before: before, limit: size + 1)
        let shown = events.prefix(size)
        return SecurityEventsBody(
            events: shown.map(Self.body),
            nextCursor: events.count > size ? shown.last.map { String($0.id) } : nil)
    }

    /// What a person is shown of `recorded`.
    static func body(_ recorded: RecordedAuditEvent) -> SecurityEventBody {
        let detail = recorded.event.detail.objectValue ?? [:]
        return SecurityEventBody(
            id: String(recorded.id), type: recorded.event.type.rawValue, at: Int(recorded.at.timeIntervalSince1970),
            provider: detail["provider"]?.stringValue,
            client: ClientBody(providerInitiated.contains(recorded.event.type) ? .unknown : recorded.context.client),
            details: detail.filter {
                shownDetails.contains($0.key) || ($0.key == "reason" && recorded.event.type == .deletionRefused)
            })
    }
}
