import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// What each console page's template reads: plain stored values (Mustache reads through
/// `Mirror`), already formatted, with every link built here from percent-encoded ids. Templates
/// escape every value; nothing here is HTML.
enum ConsoleViews {
    /// The sign-in page.
    struct SignIn {
        let formToken: String
        let problem: String?
    }

    /// A refusal page.
    struct Message {
        let text: String
    }

    /// The users page.
    struct Users {
        let query: String
        let done: String?
        let users: [UserRow]
        let hasUsers: Bool
        let next: String?

        init(query: String, page: AdminService.UserPage, done: String?) {
            self.query = query
            self.done = done
            users = page.users.map(UserRow.init)
            hasUsers = !users.isEmpty
            next = page.nextCursor.map { cursor in
                "/admin/users?" + FormEncoding.encode([("query", query), ("cursor", cursor)])
            }
        }
    }

    /// One user in the users list.
    struct UserRow {
        let id: String
        let link: String
        let email: String
        let identities: [String]
        let created: String
        let disabled: Bool
        let guest: Bool

        init(_ user: StoredUser) {
            id = user.id
            link = "/admin/users/" + ConsoleFormat.segment(user.id)
            email = user.properties["email"]?.stringValue ?? ""
            identities = user.identities.map { "\($0.provider): \($0.subject)" }
            created = ConsoleFormat.time(user.createdAt)
            disabled = user.disabled
            guest = user.anonymous
        }
    }

    /// One user's page.
    struct User {
        let formToken: String
        let done: String?
        let base: String
        let created: String
        let updated: String
        let disabled: Bool
        let guest: Bool
        let identities: [Identity]
        let hasIdentities: Bool
        let factors: [Factor]
        let hasFactors: Bool
        let recoveryCodesLeft: Int
        let sessions: [Session]
        let hasSessions: Bool
        let properties: String
        /// What the edit box was filled from (`ConsoleFormat.version`), sent back with it.
        let propertiesVersion: String
        let merges: [Event]
        let hasMerges: Bool
        let events: [Event]

        init(_ view: AdminService.UserView, formToken: String, done: String?) {
            self.formToken = formToken
            self.done = done
            let user = view.user
            let base = "/admin/users/" + ConsoleFormat.segment(user.id)
            self.base = base
            created = ConsoleFormat.time(user.createdAt)
            updated = ConsoleFormat.time(user.updatedAt)
            disabled = user.disabled
            guest = user.anonymous
            identities = user.identities.map { Identity($0, base: base) }
            hasIdentities = !identities.isEmpty
            factors = view.factors.map(Factor.init)
            hasFactors = !factors.isEmpty
            recoveryCodesLeft = view.recoveryCodesLeft
            sessions = view.sessions.map { Session($0, base: base) }
            hasSessions = !sessions.isEmpty
            properties = ConsoleFormat.properties(user.properties)
            propertiesVersion = ConsoleFormat.version(user.properties)
            events = view.events.map(Event.init)
            merges = view.events.filter { $0.event.type == .userMerged }.map(Event.init)
            hasMerges = !merges.isEmpty
        }
    }

    struct Identity {
        let provider: String
        let subject: String
        let app: String
        let permissions: String
        let first: String
        let last: String
        let unlink: String

        init(_ identity: StoredIdentity, base: String) {
            provider = identity.provider
            subject = identity.subject
            app = identity.appID
            permissions = identity.grantedPermissions.joined(separator: ", ")
            first = ConsoleFormat.time(identity.firstSeen)
            last = ConsoleFormat.time(identity.lastSeen)
            unlink =
                base + "/identities/" + ConsoleFormat.segment(identity.provider) + "/"
                + ConsoleFormat.segment(identity.subject) + "/unlink"
        }
    }

    struct Factor {
        let type: String
        let name: String
        let state: String
        let created: String
        let lastUsed: String

        init(_ factor: StoredFactor) {
            type = factor.type.rawValue
            name = factor.displayName ?? ""
            state = factor.active ? "active" : "not confirmed"
            created = ConsoleFormat.time(factor.createdAt)
            lastUsed = ConsoleFormat.time(factor.lastUsedAt)
        }
    }

    struct Session {
        let id: String
        let method: String
        let created: String
        let refreshed: String
        let expires: String
        let client: String
        let end: String

        init(_ session: StoredSession, base: String) {
            id = session.id
            method = [session.provider, session.method?.rawValue].compactMap { $0 }.joined(separator: " · ")
            created = ConsoleFormat.time(session.createdAt)
            refreshed = ConsoleFormat.time(session.refreshedAt)
            expires = ConsoleFormat.time(session.expiresAt)
            client = ConsoleFormat.client(session.client)
            end = base + "/sessions/" + ConsoleFormat.segment(session.id) + "/end"
        }
    }

    struct Event {
        let at: String
        let type: String
        let detail: String
        let node: String
        let client: String

        init(_ recorded: RecordedAuditEvent) {
            at = ConsoleFormat.time(recorded.at)
            type = recorded.event.type.rawValue
            detail = String(decoding: recorded.event.detail.encoded(), as: UTF8.self)
            node = recorded.context.node ?? ""
            client = ConsoleFormat.client(recorded.context.client)
        }
    }

    /// The deletion requests page.
    struct Deletions {
        let formToken: String
        let done: String?
        let filters: [Filter]
        let requests: [Deletion]
        let hasRequests: Bool

        init(_ requests: [StoredDeletionRequest], status: String, formToken: String, done: String?) {
            self.formToken = formToken
            self.done = done
            filters = (["received", "in_progress", "done", "refused", "all"]).map {
                Filter(value: $0, label: $0.replacingOccurrences(of: "_", with: " "), current: $0 == status)
            }
            self.requests = requests.map(Deletion.init)
            hasRequests = !requests.isEmpty
        }
    }

    struct Filter {
        let value: String
        let label: String
        let current: Bool
    }

    struct Deletion {
        let id: String
        let status: String
        let provider: String
        let subject: String
        let userID: String
        let userLink: String?
        let policy: String
        let created: String
        let updated: String
        let pending: Bool
        let reason: String?
        let approve: String
        let refuse: String

        init(_ request: StoredDeletionRequest) {
            id = request.id
            status = request.status.rawValue.replacingOccurrences(of: "_", with: " ")
            provider = request.provider
            subject = request.subject
            userID = request.userID ?? ""
            userLink = request.userID.map { "/admin/users/" + ConsoleFormat.segment($0) }
            policy = request.policy.rawValue
            created = ConsoleFormat.time(request.createdAt)
            updated = ConsoleFormat.time(request.updatedAt)
            pending = request.status == .received
            reason = request.reason
            let base = "/admin/deletions/" + ConsoleFormat.segment(request.id)
            approve = base + "/approve"
            refuse = base + "/refuse"
        }
    }

    /// The signing keys page.
    struct Keys {
        let formToken: String
        let done: String?
        let keys: [Key]
    }

    struct Key {
        let kid: String
        let role: String
        let created: String
        let retired: String

        init(_ key: StoredSigningKey, role: SigningKeyRole?) {
            kid = key.kid
            self.role = role?.rawValue ?? "retired"
            created = ConsoleFormat.time(key.createdAt)
            retired = ConsoleFormat.time(role.map { $0.shownRetirement(key.retiredAt) } ?? key.retiredAt)
        }
    }

    /// The admin keys page.
    struct AdminKeys {
        let formToken: String
        let done: String?
        let keys: [AdminKey]
    }

    struct AdminKey {
        let id: String
        let name: String
        let created: String
        let lastUsed: String
        let revoked: String
        let active: Bool
        let current: Bool
        let revoke: String

        init(_ key: StoredAdminKey, current: String) {
            id = key.id
            name = key.name
            created = ConsoleFormat.time(key.createdAt)
            lastUsed = ConsoleFormat.time(key.lastUsedAt)
            revoked = ConsoleFormat.time(key.revokedAt)
            active = key.revokedAt == nil
            self.current = key.id == current
            revoke = "/admin/admin-keys/" + ConsoleFormat.segment(key.id) + "/revoke"
        }
    }

    /// The dashboard.
    struct Dashboard {
        let tiles: [Tile]
        let charts: [DashboardCharts.Chart]
    }

    struct Tile {
        let value: String
        let label: String
    }
}

/// How the console writes values.
enum ConsoleFormat {
    /// A time in UTC to the second; empty for none.
    static func time(_ date: Date?) -> String {
        guard let date else { return "" }
        return date.formatted(
            Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().dateSeparator(.dash).time(
                includingFractionalSeconds: false
            ).timeSeparator(.colon).dateTimeSeparator(.space))
    }

    /// A path segment, percent-encoded (a subject or an id may hold any character).
    static func segment(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: segmentAllowed) ?? ""
    }

    /// RFC 3986's unreserved characters: the rest is encoded.
    private static let segmentAllowed = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    /// Properties as the edit box shows them: one member per line, sorted, values compact.
    static func properties(_ properties: [String: JSONValue]) -> String {
        guard !properties.isEmpty else { return "{}" }
        let members = properties.keys.sorted().map { name in
            "  " + String(decoding: JSONValue.string(name).encoded(), as: UTF8.self) + ": "
                + String(decoding: (properties[name] ?? .null).encoded(), as: UTF8.self)
        }
        return "{\n" + members.joined(separator: ",\n") + "\n}"
    }

    /// A short digest of `properties` as the edit box shows them: a save made from a page opened
    /// before another change is refused rather than undoing that change.
    static func version(_ properties: [String: JSONValue]) -> String {
        Hex.encode(Data(SHA256.hash(data: Data(Self.properties(properties).utf8)).prefix(16)))
    }

    /// A client as stored: its address and user agent.
    static func client(_ client: ClientInfo) -> String {
        [client.address, client.userAgent].compactMap { $0 }.joined(separator: " · ")
    }
}
