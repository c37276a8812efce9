import Foundation
import Hummingbird
import LatchkeyAPI

extension EmulatorEndpoints {
    /// Whom a Graph call is about, and for which app.
    struct Subject {
        let appID: String
        let personKey: String
    }

    /// Resolves `me` or an app-scoped id against the caller's token: a user token may read itself,
    /// an app token may read any user of its app (§5.1).
    func subject(id: String, _ request: EmulatorRequest) async throws -> Subject {
        switch try await presentedToken(request) {
        case .user(let record):
            guard let personKey = record.personKey else { throw GraphError.unparsableToken }
            let ownID = EmulatorState.appScopedID(appID: record.appID, personKey: personKey)
            guard id == "me" || id == ownID else { throw GraphError.unsupportedGet(id) }
            return Subject(appID: record.appID, personKey: personKey)
        case .app(let app):
            guard id != "me" else { throw GraphError.activeTokenRequired }
            guard let person = await state.person(scopedID: id, appID: app.id) else {
                throw GraphError.unsupportedGet(id)
            }
            return Subject(appID: app.id, personKey: person.key)
        }
    }

    /// The subject's profile as its app may see it.
    private func renderer(id: String, _ request: EmulatorRequest) async throws -> ProfileRenderer {
        let subject = try await subject(id: id, request)
        guard
            let renderer = await state.renderer(
                appID: subject.appID, personKey: subject.personKey, baseURL: request.baseURL)
        else { throw GraphError.unsupportedGet(id) }
        return renderer
    }

    /// `GET /me` and `GET /{id}` with `fields=`.
    func user(id: String, _ request: EmulatorRequest) async throws -> Response {
        let renderer = try await renderer(id: id, request)
        return .json(try renderer.graphFields(FieldSelection(parsing: request["fields"])))
    }

    /// `GET /{id}/picture`: redirects to the picture, honouring `type`, `width` and `height`
    /// (allauth fetches avatars this way); with `redirect=false` (or `0`) it answers the picture's
    /// description instead, `{"data":{"height","is_silhouette","url","width"}}`, as Graph's User
    /// Picture reference documents.
    func pictureEdge(id: String, _ request: EmulatorRequest) async throws -> Response {
        let renderer = try await renderer(id: id, request)
        var modifiers: [String: String] = [:]
        for name in ["type", "width", "height"] { modifiers[name] = request[name] }
        if let redirect = request["redirect"]?.lowercased(), ["false", "0"].contains(redirect) {
            return .json(["data": try renderer.picture(modifiers)])
        }
        let (width, height) = ProfileRenderer.pictureSize(modifiers)
        return .redirect(to: renderer.pictureURL(width: width, height: height))
    }

    /// `GET /me/permissions` (§5.3).
    func permissions(id: String, _ request: EmulatorRequest) async throws -> Response {
        let renderer = try await renderer(id: id, request)
        return .json(["data": .array(renderer.permissionEntries())])
    }

    /// `DELETE /me/permissions[/{permission}]`: removing all de-authorizes the app and kills the
    /// person's tokens for it (190/458 afterwards); removing one marks it declined.
    func revokePermissions(id: String, permission: String?, _ request: EmulatorRequest) async throws -> Response {
        let subject = try await subject(id: id, request)
        if let permission {
            guard await state.revokePermission(permission, appID: subject.appID, personKey: subject.personKey) else {
                throw GraphError(message: "(#100) The permission \(permission) is not granted", code: 100)
            }
        } else {
            await state.removeApp(appID: subject.appID, personKey: subject.personKey)
        }
        return .json(["success": true])
    }
}
