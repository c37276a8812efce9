import Foundation
import HTTPTypes
import LatchkeyAPI

/// What operators do, for the admin API and the console alike: each call validates its input,
/// asks the store (whose operations hold the rules, `Verdicts` among them), and answers typed
/// values or an `APIError`. The HTTP and HTML layers only read requests and write answers.
struct AdminService: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore
    /// Opens and seals signing keys, for a rotation.
    let protection: SigningKeyProtection

    /// Users per page when the caller does not say, and the most it may ask for.
    static let defaultPageSize = 50
    static let maximumPageSize = 200
    /// The most users one page of a property search reads (`name=value` is not indexed): about
    /// 10–20 ms on SQLite's one connection, which sign-ins wait behind (docs/performance.md). A page may then hold fewer
    /// users than asked, even none, with a `nextCursor` to read on.
    static let searchScanLimit = 10_000
    /// How much of a user's history the user view shows, and of their sessions.
    static let recentEvents = 50
    static let listedSessions = 100

    /// One page of users and where the next one starts.
    struct UserPage: Sendable {
        var users: [StoredUser]
        var nextCursor: String?
    }

    /// Everything an operator sees of one user.
    struct UserView: Sendable {
        var user: StoredUser
        var factors: [StoredFactor]
        var recoveryCodesLeft: Int
        var sessions: [StoredSession]
        var events: [RecordedAuditEvent]
    }

    /// `GET /admin/v1/users`: users matching `query` (`UserSearch`), newest first.
    func search(query: String?, cursor: String?, limit: String?) async throws -> UserPage {
        guard let search = UserSearch(query: query) else {
            throw APIError.invalidRequest(
                "query must be at most \(UserSearch.maximumLength) characters; a property is name=value, the name of letters, digits, _ - or ."
            )
        }
        let size = try Self.pageSize(limit)
        let after = try cursor.map { text in
            guard let cursor = UserCursor(text) else {
                throw APIError.invalidRequest("cursor must be a nextCursor this endpoint gave.")
            }
            return cursor
        }
        // One more than the page: whether another page exists, without a count.
        let found = try await store.searchUsers(search, after: after, limit: size + 1, scanning: Self.searchScanLimit)
        let shown = Array(found.users.prefix(size))
        let next = found.users.count > size ? shown.last.map { UserCursor(after: $0) } : found.resumeAfter
        return UserPage(users: shown, nextCursor: next?.text)
    }

    /// The page size `limit` asks for.
    static func pageSize(_ limit: String?) throws -> Int {
        guard let limit else { return defaultPageSize }
        guard limit.utf8.count <= 4, let value = Int(limit), (1...maximumPageSize).contains(value) else {
            throw APIError.invalidRequest("limit must be 1 to \(maximumPageSize).")
        }
        return value
    }

    /// `GET /admin/v1/users/{id}`.
    func view(userID: String) async throws -> UserView {
        let now = configuration.clock()
        return UserView(
            user: try await user(userID), factors: try await store.factors(userID: userID),
            recoveryCodesLeft: try await store.recoveryCodesLeft(userID: userID),
            sessions: try await store.sessions(userID: userID, now: now, limit: Self.listedSessions),
            events: try await store.auditEvents(userID: userID, limit: Self.recentEvents))
    }

    /// `PATCH /admin/v1/users/{id}`: merges `properties` (a `null` removes one). Unlike a user's
    /// own update, any property may be written, each value at most 4 KiB encoded.
    func updateProperties(userID: String, _ properties: [String: JSONValue]) async throws -> StoredUser {
        guard properties.count <= 100, properties.keys.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 }) else {
            throw APIError.invalidRequest("Send at most 100 properties, each name 1 to 64 bytes.")
        }
        guard properties.values.allSatisfy({ $0.encoded().count <= 4096 }) else {
            throw APIError.invalidRequest("A property value is too large.")
        }
        guard
            let user = try await store.updateProperties(
                userID: userID, properties: properties, now: configuration.clock())
        else { throw Self.noUser }
        return user
    }

    /// `DELETE /admin/v1/users/{id}`: the account deletion pipeline (provider permissions revoked
    /// in the background, a tombstone kept).
    func delete(userID: String) async throws {
        guard try await store.deleteUser(id: userID, now: configuration.clock(), by: .admin) else { throw Self.noUser }
    }

    /// Disables (ending every session at once) or enables a user; how many sessions ended.
    func setDisabled(userID: String, _ disabled: Bool) async throws -> Int {
        guard
            let ended = try await store.setUserDisabled(
                id: userID, disabled: disabled, now: configuration.clock(), by: .admin)
        else { throw Self.noUser }
        return ended
    }

    /// Ends every session of a user; how many were active.
    func endSessions(userID: String) async throws -> Int {
        _ = try await user(userID)
        return try await store.revokeSessions(userID: userID, now: configuration.clock(), by: .admin)
    }

    /// Ends one active session of a user.
    func endSession(userID: String, sessionID: String) async throws {
        guard
            sessionID.utf8.count <= 64,
            try await store.endSession(id: sessionID, userID: userID, now: configuration.clock(), signOut: false)
        else { throw APIError(.notFound, .notFound, "This user has no active session with this id.") }
    }

    /// Unlinks an identity from a user (never a full user's last: `409 last_sign_in_method`).
    func removeIdentity(userID: String, provider: String, subject: String) async throws -> StoredUser {
        do {
            return try await store.removeIdentity(
                userID: userID, provider: provider, subject: subject, now: configuration.clock())
        } catch let refusal as IdentityRefusal {
            switch refusal {
            case .sessionEnded: throw Self.noUser
            case .notLinked: throw APIError(.notFound, .notFound, "This user has no such identity.")
            case .lastSignInMethod:
                throw APIError(
                    .conflict, .lastSignInMethod,
                    "This is the user's only way to sign in; delete or disable the user instead.")
            default: throw refusal
            }
        }
    }

    /// Removes every second factor of a user (with recovery codes); how many there were.
    func resetFactors(userID: String) async throws -> Int {
        _ = try await user(userID)
        return try await store.removeFactors(userID: userID, now: configuration.clock(), by: .admin)
    }

    /// `GET /admin/v1/deletions`: requests in `status` (`received` when not given; `all`).
    func deletions(status: String?, limit: String?) async throws -> [StoredDeletionRequest] {
        let size = try Self.pageSize(limit)
        switch status ?? DeletionStatus.received.rawValue {
        case "all": return try await store.deletionRequests(status: nil, limit: size)
        case let text:
            guard let status = DeletionStatus(rawValue: text) else {
                throw APIError.invalidRequest(
                    "status must be all, "
                        + DeletionStatus.allCases.map(\.rawValue).joined(separator: ", ") + ".")
            }
            return try await store.deletionRequests(status: status, limit: size)
        }
    }

    /// Approves or refuses a request waiting for review.
    /// - Throws: `404` for no such request, `409 deletion_not_pending` for one not waiting.
    func decide(deletionID: String, _ decision: DeletionDecision) async throws -> StoredDeletionRequest {
        let notFound = APIError(.notFound, .notFound, "No data-deletion request has this id.")
        guard deletionID.utf8.count <= 64, let before = try await store.deletionRequest(id: deletionID) else {
            throw notFound
        }
        // Read first, so a second approval (or a refusal after one) is told nothing changed; the
        // store still decides once when two operators act together.
        guard decision.applies(to: before.status),
            let request = try await store.decideDeletionRequest(
                id: deletionID, decision, now: configuration.clock(), by: .admin)
        else {
            throw APIError(
                .conflict, .deletionNotPending,
                "This request is \(before.status.rawValue), not waiting for review; nothing changed.")
        }
        guard request.status == decision.decidedStatus else {
            throw APIError(
                .conflict, .deletionNotPending,
                "This request is \(request.status.rawValue), not waiting for review; nothing changed.")
        }
        return request
    }

    /// The session signing keys, newest first, each with its role now.
    func signingKeys() async throws -> [(key: StoredSigningKey, role: SigningKeyRole?)] {
        let keys = try await store.signingKeys()
        let roles = SigningKeyRole.roles(
            keys.map { ($0.kid, $0.createdAt, $0.retiredAt) }, now: configuration.clock(),
            accessTokenLifetime: configuration.sessions.accessTokenLifetime,
            activationDelay: configuration.sessions.keyActivationDelay)
        return keys.map { ($0, roles[$0.kid]) }
    }

    /// Adds a signing key: every node publishes it at its next key refresh and signs with it once
    /// it is `LATCHKEY_KEY_ACTIVATION_DELAY` old. The new key's id.
    func rotateKeys() async throws -> String {
        try await rotateSigningKey(in: store, protection: protection, now: configuration.clock())
    }

    /// Revokes an admin key (at once, on every node: each call reads the key).
    func revokeAdminKey(id: String) async throws -> StoredAdminKey {
        guard id.utf8.count <= 64,
            let key = try await store.revokeAdminKey(id: id, now: configuration.clock(), by: .admin)
        else { throw APIError(.notFound, .notFound, "No admin key has this id.") }
        return key
    }

    /// The user `id`, or `404`.
    func user(_ id: String) async throws -> StoredUser {
        guard id.utf8.count <= 64, let user = try await store.user(id: id) else { throw Self.noUser }
        return user
    }

    static let noUser = APIError(.notFound, .notFound, "No user has this id.")
}
