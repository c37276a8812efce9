import Foundation
import Hummingbird
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

extension EmulatorEndpoints {
    /// `POST /{app-id}/accounts/test-users` (§10): `installed`, `permissions`, `name`.
    func createTestUser(appID: String, _ request: EmulatorRequest) async throws -> Response {
        let app = try await testUserApp(appID, request)
        let installed = request["installed"].map { $0 != "false" } ?? true
        let permissions = Permissions.parse(request["permissions"])
        if let unknown = permissions.first(where: { !Permissions.known.contains($0) }) {
            throw GraphError(message: "(#100) Invalid permission: \(unknown)", code: 100)
        }
        let name = request["name"] ?? "Open Graph Test User"
        let parts = name.split(separator: " ").map(String.init)
        let suffix = RandomToken.alphanumeric(8).lowercased()
        let emailLocal = parts.map { $0.lowercased().filter(\.isLetter) }.filter { !$0.isEmpty }.joined(separator: "_")
        let person = Person(
            key: "test-\(suffix)", name: name, firstName: parts.first, lastName: parts.count > 1 ? parts.last : nil,
            email: "\(emailLocal.isEmpty ? "test_user" : emailLocal)_\(suffix)@tfbnw.net",
            password: String(Int.random(in: 10_000_000...99_999_999)), testUserOf: app.id)
        await state.addPerson(person)
        let scopedID = EmulatorState.appScopedID(appID: app.id, personKey: person.key)
        var body: [String: JSONValue] = [
            "id": .string(scopedID), "login_url": .string(loginURL(app: app, scopedID: scopedID, request)),
            "email": .string(person.email ?? ""), "password": .string(person.password ?? ""),
        ]
        if installed {
            _ = await state.recordGrant(appID: app.id, personKey: person.key, granted: Set(permissions), declined: [])
            let token = await state.issueUserToken(
                appID: app.id, personKey: person.key, lifetime: state.lifetimes.longLivedToken)
            body["access_token"] = .string(token.token)
        } else {
            body["access_token"] = .null
        }
        return .json(.object(body))
    }

    /// `GET /{app-id}/accounts/test-users` with `limit` (default 25) and `after` cursors.
    func listTestUsers(appID: String, _ request: EmulatorRequest) async throws -> Response {
        let app = try await testUserApp(appID, request)
        let limit = min(max(Int(request["limit"] ?? "") ?? 25, 1), 500)
        let people = await state.people(visibleTo: app.id)
        let start =
            request["after"].flatMap { Base64URL.decode($0) }.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
        guard start >= 0, start <= people.count else {
            throw GraphError(message: "(#100) Invalid cursor", code: 100)
        }
        let page = people.dropFirst(start).prefix(limit)
        var data: [JSONValue] = []
        for person in page {
            let scopedID = EmulatorState.appScopedID(appID: app.id, personKey: person.key)
            var entry: [String: JSONValue] = [
                "id": .string(scopedID), "login_url": .string(loginURL(app: app, scopedID: scopedID, request)),
            ]
            if let token = await state.currentUserToken(appID: app.id, personKey: person.key) {
                entry["access_token"] = .string(token)
            }
            data.append(.object(entry))
        }
        var cursors: [String: JSONValue] = [
            "before": .string(Base64URL.encode(Data(String(start).utf8))),
            "after": .string(Base64URL.encode(Data(String(start + page.count).utf8))),
        ]
        var paging: [String: JSONValue] = [:]
        if start + page.count < people.count {
            let after = cursors["after"]?.stringValue ?? ""
            paging["next"] = .string(
                "\(request.baseURL)/v21.0/\(app.id)/accounts/test-users?limit=\(limit)&after=\(after)")
        }
        if page.isEmpty { cursors = [:] }
        paging["cursors"] = .object(cursors)
        return .json(["data": .array(data), "paging": .object(paging)])
    }

    /// `POST /{test-user-id}`: change name or password (a new password revokes the user's tokens).
    func updateTestUser(id: String, _ request: EmulatorRequest) async throws -> Response {
        let app = try await appToken(request)
        guard let person = await state.person(scopedID: id, appID: app.id),
            person.testUserOf == nil || person.testUserOf == app.id
        else { throw GraphError.unsupportedGet(id) }
        _ = await state.updatePerson(key: person.key, name: request["name"], password: request["password"])
        return .json(["success": true])
    }

    /// `DELETE /{test-user-id}` with the owning app's token.
    func deleteTestUser(id: String, _ request: EmulatorRequest) async throws -> Response {
        let app = try await appToken(request)
        guard let person = await state.person(scopedID: id, appID: app.id),
            person.testUserOf == nil || person.testUserOf == app.id
        else { throw GraphError.unsupportedGet(id) }
        await state.removePerson(key: person.key)
        return .json(["success": true])
    }

    /// `POST /{u1}/friends/{u2}`: with the app's token or u1's own token.
    func befriend(_ first: String, _ second: String, _ request: EmulatorRequest) async throws -> Response {
        let appID: String
        switch try await presentedToken(request) {
        case .app(let app):
            appID = app.id
        case .user(let record):
            // A user may only befriend on their own behalf.
            guard record.personKey.map({ EmulatorState.appScopedID(appID: record.appID, personKey: $0) }) == first
            else { throw GraphError.unsupportedGet(first) }
            appID = record.appID
        }
        guard let one = await state.person(scopedID: first, appID: appID) else {
            throw GraphError.unsupportedGet(first)
        }
        guard let two = await state.person(scopedID: second, appID: appID) else {
            throw GraphError.unsupportedGet(second)
        }
        guard await state.befriend(one.key, two.key) else {
            throw GraphError(message: "(#100) Cannot befriend a user with themselves", code: 100)
        }
        return .json(["success": true])
    }

    private func testUserApp(_ appID: String, _ request: EmulatorRequest) async throws -> EmulatorApp {
        let app = try await appToken(request)
        guard app.id == appID else { throw GraphError.appTokenRequired }
        return app
    }

    /// Where the test user can log in: the emulator's dialog, approving as that user and landing on
    /// Facebook's desktop redirect page (Facebook's own `login_url` is a password page we do not need).
    private func loginURL(app: EmulatorApp, scopedID: String, _ request: EmulatorRequest) -> String {
        let query = FormEncoding.encode([
            ("client_id", app.id), ("redirect_uri", "https://www.facebook.com/connect/login_success.html"),
            ("emulator_user", scopedID),
        ])
        return "\(request.baseURL)/dialog/oauth?\(query)"
    }
}
