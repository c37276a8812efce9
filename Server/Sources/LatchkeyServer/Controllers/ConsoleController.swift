import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import LatchkeyShared

/// The operators' web console (`/admin`, docs/operations.md): server-rendered pages over
/// `AdminService`, the admin API's own operations, so a rule holds the same in both. Served where
/// the admin API is (`LATCHKEY_ADMIN_LISTEN` when set). Every page but the sign-in is behind
/// `ConsoleAuthentication`; every change is a form post answered with a redirect (303) to the page
/// it changed, which then says what was done.
struct ConsoleController: Controller {
    let admin: AdminService
    let console: ConsoleSupport
    let metrics: ServerMetrics

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.get, "/admin/console.css") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/css; charset=utf-8"
            headers[.cacheControl] = "max-age=3600"
            headers[.init("X-Content-Type-Options")!] = "nosniff"
            return Response(
                status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: ConsoleStylesheet.css)))
        }
        router.route(.get, "/admin/sign-in") { request, _ in try await signInPage(request) }
        router.route(.post, "/admin/sign-in") { request, context in try await signIn(request, context) }
        let pages = router.group("/admin").add(middleware: ConsoleAuthentication(console: console))
        pages.route(.get, "") { _, context in try await dashboard(context) }
        pages.route(.post, "/sign-out") { _, context in
            // Ends every console session of the key signed in until now, copies of this cookie
            // included, on every node (each reads the key).
            let now = console.clock()
            if let key = context.adminKey { try await admin.store.endConsoleSessions(keyID: key.id) }
            var response = Self.redirect("/admin/sign-in")
            response.setCookie(try console.cookie(nil, now: now))
            return response
        }
        registerUsers(on: pages)
        pages.route(.get, "/deletions") { request, context in
            let status = request.uri.queryParameters["status"].map(String.init) ?? "received"
            let requests = try await admin.deletions(status: status, limit: String(AdminService.maximumPageSize))
            return try page(
                "deletions", "Deletion requests", .deletions, context,
                ConsoleViews.Deletions(
                    requests, status: status, formToken: try Self.session(context).formToken,
                    done: Self.done(request)))
        }
        pages.route(.post, "/deletions/{id}/approve") { _, context in
            _ = try await admin.decide(deletionID: try AdminController.parameter("id", context), .approve)
            return Self.redirect("/admin/deletions?done=approved")
        }
        pages.route(.post, "/deletions/{id}/refuse") { request, context in
            let fields = try await form(request, ["reason"])
            guard let reason = fields["reason"].flatMap(DeletionDecision.reason) else {
                throw APIError.invalidRequest(
                    "Give a reason: 1 to \(DeletionDecision.maximumReason) characters of plain text, which the person reads."
                )
            }
            _ = try await admin.decide(
                deletionID: try AdminController.parameter("id", context), .refuse(reason: reason))
            return Self.redirect("/admin/deletions?done=refused")
        }
        pages.route(.get, "/keys") { request, context in
            let keys = try await admin.signingKeys().map { ConsoleViews.Key($0.key, role: $0.role) }
            return try page(
                "keys", "Signing keys", .keys, context,
                ConsoleViews.Keys(formToken: try Self.session(context).formToken, done: Self.done(request), keys: keys))
        }
        pages.route(.post, "/keys/rotate") { _, _ in
            _ = try await admin.rotateKeys()
            return Self.redirect("/admin/keys?done=rotated")
        }
        pages.route(.get, "/admin-keys") { request, context in
            let current = context.adminKey?.id ?? ""
            let keys = try await admin.store.adminKeys().map { ConsoleViews.AdminKey($0, current: current) }
            return try page(
                "admin-keys", "Admin keys", .adminKeys, context,
                ConsoleViews.AdminKeys(
                    formToken: try Self.session(context).formToken, done: Self.done(request), keys: keys))
        }
        pages.route(.post, "/admin-keys/{id}/revoke") { _, context in
            _ = try await admin.revokeAdminKey(id: try AdminController.parameter("id", context))
            return Self.redirect("/admin/admin-keys?done=revoked")
        }
    }

    private func registerUsers(on pages: RouterGroup<LatchkeyRequestContext>) {
        pages.route(.get, "/users") { request, context in
            let query = request.uri.queryParameters["query"].map(String.init) ?? ""
            let cursor = request.uri.queryParameters["cursor"].map(String.init)
            let found = try await admin.search(
                query: query, cursor: cursor.flatMap { $0.isEmpty ? nil : $0 }, limit: nil)
            return try page(
                "users", "Users", .users, context,
                ConsoleViews.Users(query: query, page: found, done: Self.done(request)))
        }
        pages.route(.get, "/users/{id}") { request, context in
            let view = try await admin.view(userID: try AdminController.parameter("id", context))
            return try page(
                "user", "User \(view.user.id)", .users, context,
                ConsoleViews.User(view, formToken: try Self.session(context).formToken, done: Self.done(request)))
        }
        let user = "/users/{id}"
        pages.route(.post, "\(user)/properties") { request, context in
            let id = try AdminController.parameter("id", context)
            let fields = try await form(request, ["properties", "version"])
            guard let edited = (try? JSONValue.decode(Data((fields["properties"] ?? "").utf8)))?.objectValue else {
                throw APIError.invalidRequest("The properties must be one JSON object, such as {\"tier\": \"gold\"}.")
            }
            // The box shows every property, so one missing from it was removed; unless the page
            // was opened before another change, which the box does not show.
            let before = try await admin.user(id).properties
            guard let version = fields["version"], ConstantTime.equals(version, ConsoleFormat.version(before)) else {
                throw APIError(
                    .conflict, .invalidRequest,
                    "The properties changed since this page was opened; nothing was saved. Open the page again.")
            }
            var change = edited
            for name in before.keys where edited[name] == nil { change[name] = .null }
            _ = try await admin.updateProperties(userID: id, change)
            return Self.redirect(Self.userPage(id, done: "properties_saved"))
        }
        for (action, disabled) in [("disable", true), ("enable", false)] {
            pages.route(.post, "\(user)/\(action)") { _, context in
                let id = try AdminController.parameter("id", context)
                _ = try await admin.setDisabled(userID: id, disabled)
                return Self.redirect(Self.userPage(id, done: disabled ? "disabled" : "enabled"))
            }
        }
        pages.route(.post, "\(user)/delete") { request, context in
            let id = try AdminController.parameter("id", context)
            guard try await form(request, ["confirm"])["confirm"] == "yes" else {
                throw APIError.invalidRequest("Tick the box to confirm the deletion.")
            }
            try await admin.delete(userID: id)
            return Self.redirect("/admin/users?done=deleted")
        }
        pages.route(.post, "\(user)/sessions/end") { _, context in
            let id = try AdminController.parameter("id", context)
            _ = try await admin.endSessions(userID: id)
            return Self.redirect(Self.userPage(id, done: "sessions_ended"))
        }
        pages.route(.post, "\(user)/sessions/{sessionId}/end") { _, context in
            let id = try AdminController.parameter("id", context)
            try await admin.endSession(userID: id, sessionID: try AdminController.parameter("sessionId", context))
            return Self.redirect(Self.userPage(id, done: "session_ended"))
        }
        pages.route(.post, "\(user)/identities/{provider}/{subject}/unlink") { _, context in
            let id = try AdminController.parameter("id", context)
            _ = try await admin.removeIdentity(
                userID: id, provider: try AdminController.parameter("provider", context),
                subject: try AdminController.parameter("subject", context))
            return Self.redirect(Self.userPage(id, done: "unlinked"))
        }
        pages.route(.post, "\(user)/factors/reset") { _, context in
            let id = try AdminController.parameter("id", context)
            _ = try await admin.resetFactors(userID: id)
            return Self.redirect(Self.userPage(id, done: "factors_reset"))
        }
    }

    // MARK: Signing in

    /// The sign-in form, with a fresh form token in its own cookie; the dashboard when signed in.
    private func signInPage(
        _ request: Request, problem: String? = nil, status: HTTPResponse.Status = .ok
    )
        async throws -> Response
    {
        if problem == nil, try await console.session(request, now: console.clock()) != nil {
            return Self.redirect("/admin")
        }
        let token = ConsoleSession.randomToken()
        var response = console.renderer.page(
            "sign-in", title: "Sign in", view: ConsoleViews.SignIn(formToken: token, problem: problem), chrome: nil,
            status: status)
        response.setCookie(console.signInCookie(token))
        return response
    }

    /// Checks the key typed in: a session cookie and the dashboard, or the form again. A wrong key
    /// counts against the address as the admin API's do (`LATCHKEY_LIMIT_ADMIN_PER_ADDRESS`).
    private func signIn(_ request: Request, _ context: LatchkeyRequestContext) async throws -> Response {
        guard console.sameOrigin(request) else {
            return try await signInPage(
                request, problem: "This form did not come from this console.", status: .forbidden)
        }
        let fields = try await form(request, ["key"])
        let presented = fields["csrf"] ?? ""
        let expected = ConsoleSupport.cookies(
            request, named: ConsoleSession.signInCookieName(secure: console.secureCookies))
        guard !presented.isEmpty, expected.contains(where: { ConstantTime.equals(presented, $0) }) else {
            return try await signInPage(request, problem: "The form expired; sign in again.", status: .forbidden)
        }
        let text = (fields["key"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard let key = try await console.authentication.key(text) else {
            do {
                try await console.authentication.refuse(request, context)
            } catch let error as APIError {
                // The limit's 429 says when to try again, as the admin API's does.
                var page = try await signInPage(request, problem: error.message, status: error.status)
                if let retryAfter = error.retryAfter { page.headers[.retryAfter] = String(retryAfter) }
                return page
            }
            return try await signInPage(
                request, problem: "This admin key is not valid, or was revoked.", status: .unauthorized)
        }
        var context = context
        context.adminKey = key
        return try await console.authentication.audited(request, context, key: key) { _, _ in
            let now = console.clock()
            var response = Self.redirect("/admin")
            response.setCookie(try console.cookie(ConsoleSession(key: key, now: now), now: now))
            // The sign-in form's token is spent.
            response.headers.append(HTTPField(name: .setCookie, value: console.signInCookie(nil).description))
            return response
        }
    }

    // MARK: Pages

    private func dashboard(_ context: LatchkeyRequestContext) async throws -> Response {
        let gauges = try await admin.store.gauges(now: console.clock())
        var tiles = [
            ConsoleViews.Tile(value: String(gauges.activeSessions), label: "active sessions"),
            ConsoleViews.Tile(value: String(gauges.deletionsReceived), label: "deletion requests waiting"),
            ConsoleViews.Tile(value: String(gauges.deletionsInProgress), label: "deletions in progress"),
            ConsoleViews.Tile(value: String(gauges.jobsDue), label: "background jobs due"),
        ]
        if let pool = gauges.pool {
            tiles.append(
                ConsoleViews.Tile(value: "\(pool.inUse) / \(pool.limit)", label: "database connections in use"))
        }
        return try page(
            "dashboard", "Dashboard", .dashboard, context,
            ConsoleViews.Dashboard(tiles: tiles, charts: DashboardCharts.charts(metrics.history.recent())))
    }

    /// A page of the console, in the layout, for the signed-in key.
    private func page(
        _ template: String, _ title: String, _ section: ConsoleChrome.Section, _ context: LatchkeyRequestContext,
        _ view: Any
    ) throws -> Response {
        let session = try Self.session(context)
        return console.renderer.page(
            template, title: title, view: view,
            chrome: ConsoleChrome(keyName: context.adminKey?.name ?? "", formToken: session.formToken, section: section)
        )
    }

    /// A form's fields (`csrf`, already checked, and `allowed`) as strings.
    private func form(_ request: Request, _ allowed: Set<String>) async throws -> [String: String] {
        try await console.reading.fields(request, allowed: allowed.union(["csrf"])).compactMapValues(\.stringValue)
    }

    private static func session(_ context: LatchkeyRequestContext) throws -> ConsoleSession {
        guard let session = context.consoleSession else { throw APIError.adminKeyInvalid }
        return session
    }

    private static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    private static func userPage(_ id: String, done: String) -> String {
        "/admin/users/" + ConsoleFormat.segment(id) + "?done=" + done
    }

    /// What a change said it did (`?done=`), from a fixed list: a page never shows text from its URL.
    static func done(_ request: Request) -> String? {
        request.uri.queryParameters["done"].flatMap { messages[String($0)] }
    }

    static let messages = [
        "properties_saved": "Properties saved.", "disabled": "User disabled; every session ended.",
        "enabled": "User enabled.", "deleted": "User deleted.", "sessions_ended": "Every session ended.",
        "session_ended": "Session ended.", "unlinked": "Identity unlinked.", "factors_reset": "Second factors removed.",
        "approved": "Request approved: the deletion runs in the background.", "refused": "Request refused.",
        "rotated": "A new signing key was added.", "revoked": "Admin key revoked.",
    ]
}
