import Crypto
import Foundation
import HTTPTypes
import LatchkeyAPI
import NIOCore

/// Verifies a classic Facebook access token (facebook-protocol.md §4, §5): `debug_token` with the
/// literal app token proves which app and user the token belongs to, and `/me` with
/// `appsecret_proof` reads the profile; both run concurrently, so a login costs one round trip.
struct AccessTokenVerifier: Sendable {
    let graph: GraphClient
    let apps: [ServerConfiguration.FacebookApp]
    let clock: @Sendable () -> Date

    func verify(_ token: String, mapping: FieldMapping) async throws -> FacebookIdentity {
        guard !token.isEmpty, token.utf8.count <= 4096 else {
            throw APIError(.unauthorized, .facebookTokenInvalid, "The Facebook access token is malformed.")
        }
        if CompactJWS.looksLikeJWT(token) {
            throw APIError(
                .badRequest, .idTokenSentAsAccessToken,
                "This is a Limited Login id token (a JWT); send it as idToken, with its nonce.")
        }
        guard let primary = apps.first else {
            throw APIError(.internalServerError, .internalError, "No app configured.")
        }
        async let inspection = graph.get(
            "/debug_token", query: [("input_token", token), ("access_token", "\(primary.id)|\(primary.secret)")])
        async let profile = me(token, app: primary, mapping: mapping)
        let inspected = try await inspection.body
        guard let data = inspected["data"] else {
            // debug_token refused our own app token: a server misconfiguration, not the user's fault.
            throw APIError(
                .internalServerError, .internalError, "The server's Facebook app credentials were refused.",
                cause: GraphRefusal(message: inspected["error"]?["message"]?.stringValue ?? "no data"))
        }
        let appID = try check(data)
        let me: JSONValue
        if appID == primary.id {
            me = try await profile
        } else {
            // The token belongs to another served app: the proof needs that app's secret, so the
            // concurrent call (made with the first app's proof) is discarded and made again.
            _ = try? await profile
            guard let app = apps.first(where: { $0.id == appID }) else { throw APIError.unauthorized }
            me = try await self.me(token, app: app, mapping: mapping)
        }
        let subject = me["id"]?.stringValue ?? ""
        guard !subject.isEmpty, let userID = data["user_id"]?.stringValue,
            ConstantTime.equals(subject, userID)
        else {
            throw APIError(.unauthorized, .facebookTokenInvalid, "Facebook's answers about this token disagree.")
        }
        let permissions = me["permissions"]?["data"]?.arrayValue ?? []
        func names(_ status: String) -> [String] {
            permissions.filter { $0["status"]?.stringValue == status }.compactMap { $0["permission"]?.stringValue }
                .sorted()
        }
        let granted = names("granted")
        return FacebookIdentity(
            appID: appID, subject: subject, profile: FieldMapping.normalizeGraph(me.objectValue ?? [:]),
            granted: granted.isEmpty ? (data["scopes"]?.arrayValue ?? []).compactMap(\.stringValue).sorted() : granted,
            declined: names("declined"), kind: .classic)
    }

    /// Checks `debug_token`'s `data` (§4) and returns the token's app id.
    private func check(_ data: JSONValue) throws -> String {
        guard data["is_valid"] == .bool(true) else {
            // Facebook often omits the subcode (§6.3); an expiry in the past still says why.
            if let expiresAt = data["expires_at"]?.intValue, expiresAt != 0,
                Double(expiresAt) <= clock().timeIntervalSince1970
            {
                throw APIError(.unauthorized, .facebookTokenExpired, "The Facebook access token has expired.")
            }
            throw Self.rejection(data["error"])
        }
        guard data["type"]?.stringValue == "USER" else {
            throw APIError(.unauthorized, .facebookNotUserToken, "This is not a Facebook user access token.")
        }
        guard let appID = data["app_id"]?.stringValue, apps.contains(where: { $0.id == appID }) else {
            throw APIError(.unauthorized, .facebookWrongApp, "This Facebook token was issued to another app.")
        }
        if let expiresAt = data["expires_at"]?.intValue, expiresAt != 0,
            Double(expiresAt) <= clock().timeIntervalSince1970
        {
            throw APIError(.unauthorized, .facebookTokenExpired, "The Facebook access token has expired.")
        }
        return appID
    }

    private func me(
        _ token: String, app: ServerConfiguration.FacebookApp, mapping: FieldMapping
    ) async throws
        -> JSONValue
    {
        let proof = Hex.encode(
            HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: SymmetricKey(data: Data(app.secret.utf8))))
        let answer = try await graph.get(
            "/me", query: [("fields", mapping.graphFields), ("access_token", token), ("appsecret_proof", proof)])
        if let error = answer.body["error"] {
            if error["type"]?.stringValue == "GraphMethodException" {
                // appsecret_proof refused: our secret is wrong, not the user's token.
                throw APIError(
                    .internalServerError, .internalError, "The server's Facebook app credentials were refused.",
                    cause: GraphRefusal(message: error["message"]?.stringValue ?? ""))
            }
            throw Self.rejection(error)
        }
        return answer.body
    }

    /// Keeps Facebook's reason (§6.3): expired, password changed, app removed, logged out.
    static func rejection(_ error: JSONValue?) -> APIError {
        let subcode = error?["subcode"]?.intValue ?? error?["error_subcode"]?.intValue
        switch subcode {
        case 463: return APIError(.unauthorized, .facebookTokenExpired, "The Facebook access token has expired.")
        case 460:
            return APIError(
                .unauthorized, .facebookPasswordChanged, "The Facebook session ended because the password changed.")
        case 458: return APIError(.unauthorized, .facebookAppRemoved, "The person removed this app on Facebook.")
        case 467: return APIError(.unauthorized, .facebookLoggedOut, "The person logged out of Facebook.")
        default: return APIError(.unauthorized, .facebookTokenInvalid, "Facebook rejected the access token.")
        }
    }
}

/// Facebook refused the server's own credentials; logged as the cause of a 500, never sent.
struct GraphRefusal: Error, Sendable {
    let message: String
}
