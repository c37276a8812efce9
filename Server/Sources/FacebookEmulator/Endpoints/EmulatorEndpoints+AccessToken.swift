import Foundation
import Hummingbird
import LatchkeyAPI

extension EmulatorEndpoints {
    /// `GET|POST /oauth/access_token`: code exchange (secret or PKCE), `fb_exchange_token`,
    /// `client_credentials` and `fb_extend_sso_token` (§3).
    func accessToken(_ request: EmulatorRequest) async throws -> Response {
        switch request["grant_type"] {
        case "client_credentials":
            let app = try await clientApp(request)
            try verifySecret(request, app: app)
            return .json(["access_token": .string(await state.issueAppToken(appID: app.id)), "token_type": "bearer"])
        case "fb_exchange_token":
            let app = try await clientApp(request)
            try verifySecret(request, app: app)
            guard let old = request["fb_exchange_token"] else { throw GraphError.missingParameter("fb_exchange_token") }
            return try await exchangeForLongLived(old, app: app)
        case "fb_extend_sso_token":
            guard let old = request.accessToken else { throw GraphError.activeTokenRequired }
            guard case .user(let record) = try await presentedToken(request), let app = await state.app(record.appID)
            else { throw GraphError.unparsableToken }
            return try await exchangeForLongLived(old, app: app, includeExpiresAt: true)
        case nil, "authorization_code":
            return try await exchangeCode(request)
        case let other?:
            throw GraphError(message: "Unsupported grant_type: \(other)", code: 100)
        }
    }

    private func exchangeCode(_ request: EmulatorRequest) async throws -> Response {
        let app = try await clientApp(request)
        guard let redirectURI = request.parameters["redirect_uri"] else {
            throw GraphError(message: "Missing redirect_uri parameter.", code: 191)
        }
        guard let code = request["code"] else { throw GraphError(message: "Missing code parameter.", code: 100) }
        let verifier = request["code_verifier"]
        var secretVerified = false
        if request["client_secret"] != nil || verifier == nil {
            try verifySecret(request, app: app)
            secretVerified = true
        }
        let (redeemed, record) = try await state.exchange(
            code: code, appID: app.id, redirectURI: redirectURI, verifier: verifier, secretVerified: secretVerified
        ).get()
        var body: [String: JSONValue] = [
            "access_token": .string(record.token), "token_type": "bearer",
            "expires_in": .int(Int(state.lifetimes.longLivedToken)),
        ]
        if redeemed.openID {
            guard
                let minted = try await state.mintIDToken(
                    appID: app.id, personKey: redeemed.personKey, nonce: redeemed.nonce, accessToken: record.token,
                    baseURL: request.baseURL)
            else { throw GraphError.unparsableToken }
            body["id_token"] = .string(minted.token)
        }
        return .json(.object(body))
    }

    private func exchangeForLongLived(
        _ token: String, app: EmulatorApp, includeExpiresAt: Bool = false
    ) async throws
        -> Response
    {
        guard case .user(let record) = try await state.validate(token: token).get(), record.appID == app.id,
            let personKey = record.personKey
        else {
            throw GraphError(message: "Invalid OAuth access token - Cannot parse access token", code: 190)
        }
        let fresh = await state.issueUserToken(
            appID: app.id, personKey: personKey, lifetime: state.lifetimes.longLivedToken, authType: record.authType)
        let expiresIn = Int(state.lifetimes.longLivedToken)
        var body: [String: JSONValue] = [
            "access_token": .string(fresh.token), "token_type": "bearer", "expires_in": .int(expiresIn),
        ]
        if includeExpiresAt {
            body["expires_at"] = .int(Int(fresh.expiresAt?.timeIntervalSince1970 ?? 0))
            body["data_access_expiration_time"] = .int(Int(fresh.dataAccessExpiresAt?.timeIntervalSince1970 ?? 0))
            body["graph_domain"] = "facebook"
        }
        return .json(.object(body))
    }
}
