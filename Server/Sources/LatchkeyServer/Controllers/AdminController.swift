import Foundation
import Hummingbird
import LatchkeyAPI

/// The admin API (`/admin/v1/…`, docs/admin-openapi.json): every route behind
/// `AdminAuthentication`, each call audited. Served on `LATCHKEY_ADMIN_LISTEN` when it is set,
/// else on the public listener.
struct AdminController: Controller {
    let admin: AdminService
    let authentication: AdminAuthentication
    let reading: RequestReading

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.get, "/admin/openapi.json") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/json; charset=utf-8"
            return Response(
                status: .ok, headers: headers,
                body: .init(byteBuffer: ByteBuffer(string: AdminOpenAPIDocument.json)))
        }
        let api = router.group("/admin/v1").add(middleware: authentication)
        registerUsers(on: api)
        api.route(.get, "/deletions") { request, _ in
            let query = try Self.query(request, allowed: ["status", "limit"])
            let requests = try await admin.deletions(status: query["status"], limit: query["limit"])
            return try Response.json(JSONValue.object(["deletions": .array(requests.map(AdminJSON.deletion))]))
        }
        api.route(.post, "/deletions/{id}/approve") { _, context in
            let request = try await admin.decide(deletionID: try Self.parameter("id", context), .approve)
            return try Response.json(JSONValue.object(["deletion": AdminJSON.deletion(request)]))
        }
        api.route(.post, "/deletions/{id}/refuse") { request, context in
            let fields = try await reading.fields(request, allowed: ["reason"])
            guard let text = fields["reason"]?.stringValue, let reason = DeletionDecision.reason(text) else {
                throw APIError.invalidRequest(
                    "Send {\"reason\": \"…\"}: 1 to \(DeletionDecision.maximumReason) characters of plain text, which the person reads."
                )
            }
            let decided = try await admin.decide(
                deletionID: try Self.parameter("id", context), .refuse(reason: reason))
            return try Response.json(JSONValue.object(["deletion": AdminJSON.deletion(decided)]))
        }
        api.route(.get, "/keys") { _, _ in
            let keys = try await admin.signingKeys()
            return try Response.json(
                JSONValue.object(["keys": .array(keys.map { AdminJSON.signingKey($0.key, role: $0.role) })]))
        }
        api.route(.post, "/keys/rotate") { _, _ in
            let kid = try await admin.rotateKeys()
            return try Response.json(JSONValue.object(["kid": .string(kid)]), status: .created)
        }
        api.route(.get, "/admin-keys") { _, _ in
            let keys = try await admin.store.adminKeys()
            return try Response.json(JSONValue.object(["adminKeys": .array(keys.map(AdminJSON.adminKey))]))
        }
        api.route(.delete, "/admin-keys/{id}") { _, context in
            let key = try await admin.revokeAdminKey(id: try Self.parameter("id", context))
            return try Response.json(JSONValue.object(["adminKey": AdminJSON.adminKey(key)]))
        }
    }

    private func registerUsers(on api: RouterGroup<LatchkeyRequestContext>) {
        api.route(.get, "/users") { request, _ in
            let query = try Self.query(request, allowed: ["query", "cursor", "limit"])
            let page = try await admin.search(query: query["query"], cursor: query["cursor"], limit: query["limit"])
            return try Response.json(AdminJSON.page(page))
        }
        api.route(.get, "/users/{id}") { _, context in
            try Response.json(AdminJSON.view(try await admin.view(userID: try Self.parameter("id", context))))
        }
        api.route(.patch, "/users/{id}") { request, context in
            let fields = try await reading.fields(request, allowed: ["properties"])
            guard let properties = fields["properties"]?.objectValue else {
                throw APIError.invalidRequest("Send {\"properties\": {…}}; a null value removes a property.")
            }
            let user = try await admin.updateProperties(userID: try Self.parameter("id", context), properties)
            return try Response.json(JSONValue.object(["user": AdminJSON.user(user)]))
        }
        api.route(.delete, "/users/{id}") { _, context in
            try await admin.delete(userID: try Self.parameter("id", context))
            return Response(status: .noContent)
        }
        for (path, disabled) in [("/users/{id}/disable", true), ("/users/{id}/enable", false)] {
            api.route(.post, path) { _, context in
                let id = try Self.parameter("id", context)
                let ended = try await admin.setDisabled(userID: id, disabled)
                return try Response.json(JSONValue.object(["sessionsEnded": .int(ended)]))
            }
        }
        api.route(.delete, "/users/{id}/sessions") { _, context in
            let ended = try await admin.endSessions(userID: try Self.parameter("id", context))
            return try Response.json(JSONValue.object(["sessionsEnded": .int(ended)]))
        }
        api.route(.delete, "/users/{id}/sessions/{sessionId}") { _, context in
            try await admin.endSession(
                userID: try Self.parameter("id", context), sessionID: try Self.parameter("sessionId", context))
            return Response(status: .noContent)
        }
        api.route(.delete, "/users/{id}/identities/{provider}/{subject}") { _, context in
            let user = try await admin.removeIdentity(
                userID: try Self.parameter("id", context), provider: try Self.parameter("provider", context),
                subject: try Self.parameter("subject", context))
            return try Response.json(JSONValue.object(["user": AdminJSON.user(user)]))
        }
        api.route(.delete, "/users/{id}/factors") { _, context in
            let removed = try await admin.resetFactors(userID: try Self.parameter("id", context))
            return try Response.json(JSONValue.object(["factorsRemoved": .int(removed)]))
        }
    }

    /// A path parameter, percent-decoded; a 404 for one no stored id could match.
    static func parameter(_ name: String, _ context: LatchkeyRequestContext) throws -> String {
        guard let value = decoded(name, context) else { throw APIError(.notFound, .notFound, "Nothing has this id.") }
        return value
    }

    /// A path parameter, percent-decoded, or `nil` when no stored id could match it (empty, too
    /// long, a control character: PostgreSQL's text cannot hold a NUL). The audit names the same.
    static func decoded(_ name: String, _ context: LatchkeyRequestContext) -> String? {
        guard let raw = context.parameters.get(name), let value = raw.removingPercentEncoding, !value.isEmpty,
            value.utf8.count <= 256, !UserSearch.hasControlCharacter(value)
        else { return nil }
        return value
    }

    /// The query's parameters, each at most once and each one of `allowed`.
    static func query(_ request: Request, allowed: Set<String>) throws -> [String: String] {
        let query = QueryParameters(request.uri.query)
        guard query.repeated.isEmpty else { throw APIError.invalidRequest("Send each parameter once.") }
        guard query.values.keys.allSatisfy(allowed.contains) else {
            throw APIError.invalidRequest(
                "Unknown query parameter; this endpoint takes \(allowed.sorted().joined(separator: ", ")).")
        }
        return query.values
    }
}
