import Foundation
import Hummingbird
import LatchkeyAPI

extension EmulatorEndpoints {
    /// `GET /debug_token` (§4): HTTP 200 with `data.is_valid` for any input token of the viewing
    /// app, 400 for a bad caller, and 400 code 100 for a token issued to another app.
    ///
    /// Facebook never describes another app's token to a caller: it answers `(#100) The App_id in
    /// the input_token did not match the Viewing App` (Firebase users paste this message in
    /// firebase/quickstart-unity#1040; Meta's `debug_token` docs require the token to belong to
    /// the same app; facebook-protocol.md §13, correction).
    func debugToken(_ request: EmulatorRequest) async throws -> Response {
        let viewer = try await appToken(request)
        guard let input = request["input_token"] else { throw GraphError.missingParameter("input_token") }
        if let owner = await state.owningAppID(of: input), owner != viewer.id { throw GraphError.appMismatch }
        return .json(["data": await inspect(input, sendsSubcode: request.sendsSubcodes)])
    }

    private func inspect(_ input: String, sendsSubcode: Bool) async -> JSONValue {
        guard let (record, app, grant, problem) = await state.debugSnapshot(input) else {
            switch await state.validate(token: input) {
            case .success(.app(let app)):
                return appTokenData(app)
            case .success(.user), .failure:
                let message =
                    input.contains("|")
                    ? "Invalid OAuth access token signature." : "Invalid OAuth access token - Cannot parse access token"
                return ["error": ["code": 190, "message": .string(message)], "is_valid": false, "scopes": []]
            }
        }
        if record.kind == .app { return appTokenData(app) }
        var data: [String: JSONValue] = [
            "app_id": .string(app.id), "type": "USER", "application": .string(app.name),
            "issued_at": .int(Int(record.issuedAt.timeIntervalSince1970)),
            "expires_at": .int(Int(record.expiresAt?.timeIntervalSince1970 ?? 0)),
        ]
        if let dataAccess = record.dataAccessExpiresAt {
            data["data_access_expires_at"] = .int(Int(dataAccess.timeIntervalSince1970))
        }
        if let personKey = record.personKey {
            data["user_id"] = .string(EmulatorState.appScopedID(appID: app.id, personKey: personKey))
            // Once the person removed the app, `scopes` is empty but `granular_scopes` still lists
            // what was granted (captured answers for 190/458).
            let removed = record.invalidation == .appRemoved || grant == nil
            let granted = removed ? record.grantedAtRemoval ?? [] : grant?.granted ?? []
            data["scopes"] = removed ? [] : .array(granted.sorted().map(JSONValue.string))
            // Facebook leaves the permissions every login has out of `granular_scopes`, and the
            // member out entirely when nothing else was granted.
            let granular = granted.subtracting(Self.ungranularPermissions).sorted()
            if !granular.isEmpty { data["granular_scopes"] = .array(granular.map { ["scope": .string($0)] }) }
        }
        if let authType = record.authType { data["metadata"] = ["auth_type": .string(authType)] }
        if let problem {
            var error: [String: JSONValue] = ["code": .int(problem.code), "message": .string(problem.message)]
            if sendsSubcode, let subcode = problem.subcode { error["subcode"] = .int(subcode) }
            data["error"] = .object(error)
            data["is_valid"] = false
        } else {
            data["is_valid"] = true
        }
        return .object(data)
    }

    /// Permissions `granular_scopes` never lists: `public_profile` and `email` carry no targets.
    static let ungranularPermissions: Set<String> = ["public_profile", "email"]

    private func appTokenData(_ app: EmulatorApp) -> JSONValue {
        ["app_id": .string(app.id), "type": "APP", "application": .string(app.name), "is_valid": true, "scopes": []]
    }

    /// `GET /app`: the app a token belongs to (Parse checks user tokens this way).
    func appInfo(_ request: EmulatorRequest) async throws -> Response {
        let appID: String
        switch try await presentedToken(request) {
        case .app(let app): appID = app.id
        case .user(let record): appID = record.appID
        }
        guard let app = await state.app(appID) else { throw GraphError.unparsableToken }
        return .json([
            "id": .string(app.id), "name": .string(app.name),
            "link": .string("https://www.facebook.com/games/?app_id=\(app.id)"),
        ])
    }
}
