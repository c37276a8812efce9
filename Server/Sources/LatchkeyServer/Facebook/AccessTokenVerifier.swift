import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import NIOCore

/// Verifies a classic Facebook access token (facebook-protocol.md §4, §5): `debug_token` with the
/// app token proves which app and user the token belongs to, and `/me` with `appsecret_proof`
/// reads the profile; both run concurrently, so a login costs one round trip and two calls.
///
/// With several apps served, `GET /app` with the person's token first names the token's app
/// (Parse Server checks tokens this way): Facebook never describes another app's token through
/// `debug_token`, so asking each app in turn would cost a call per app.
struct AccessTokenVerifier: Sendable {
    let graph: GraphClient
    let apps: [ServerConfiguration.FacebookApp]
    let health: FacebookHealth
    let clock: @Sendable () -> Date
    /// The most Graph calls in flight at once.
    let budget: FacebookCallBudget
    /// Facebook's recent verdicts on tokens, so a replayed bad token costs no call.
    let rejections: RejectedTokenCache

    func verify(_ token: String, mapping: FieldMapping) async throws -> FacebookIdentity {
        // Only the characters Facebook's tokens are made of (base62, and `|`, `.`, `_`, `-` in
        // older and app tokens): the token travels in an HTTP header, where a CR or LF would be an
        // injection, and into Graph's error messages, which our log keeps.
        guard !token.isEmpty, token.utf8.count <= 4096, token.utf8.allSatisfy(Self.isTokenByte) else {
            throw APIError(.unauthorized, .facebookTokenInvalid, "The Facebook access token is malformed.")
        }
        if CompactJWS.looksLikeJWT(token) {
            throw APIError(
                .badRequest, .idTokenSentAsAccessToken,
                "This is a Limited Login id token (a JWT); send it as idToken, with its nonce.")
        }
        if let rejected = rejections.rejection(of: token, now: clock()) { throw rejected }
        let tightened = graph.usage.isTightened
        if tightened, token.contains("|") {
            // Near Facebook's throttle, an app or client token (`APPID|…`, never a person's) costs
            // no call: `debug_token` would only call it an app token.
            throw APIError.notUserToken
        }
        // A single app costs two calls; several, `/app` first and, for apps that require
        // `appsecret_proof`, a `debug_token` each.
        let calls = apps.count == 1 ? 2 : apps.count + 2
        do {
            return try await budget.spending(calls) { try await verifyWithFacebook(token, mapping: mapping) }
        } catch let error as APIError {
            rejections.remember(
                error, for: token, now: clock(),
                atLeast: tightened ? FacebookUsageMonitor.tightenedRejectionLifetime : 0)
            throw error
        }
    }

    private func verifyWithFacebook(_ token: String, mapping: FieldMapping) async throws -> FacebookIdentity {
        let (app, inspected) = try await owningApp(of: token)
        async let profile = me(token, app: app, mapping: mapping)
        // `debug_token`'s verdict (wrong app, expired, revoked) comes first: `/me` made with our
        // proof fails for another app's token too, and must not be read as our secret being wrong.
        let data: JSONValue
        if let inspected { data = inspected } else { data = try await inspect(token, app: app) }
        let answer = try await profile
        // Facebook charges `/me` to the token's own app: only now that `debug_token` confirmed the
        // token is `app`'s may its usage headers speak for `app` (another app's token would
        // otherwise let a stranger set our usage level).
        graph.record(answer, app: app.id)
        if let failure = answer.failure {
            // `debug_token` vouched for the token: a refused proof now means our secret is wrong.
            throw observed(FacebookTriage.profile(failure), app: app)
        }
        let me = answer.body
        let subject = me["id"]?.stringValue ?? ""
        guard !subject.isEmpty, let userID = data["user_id"]?.stringValue, ConstantTime.equals(subject, userID) else {
            throw APIError(.unauthorized, .facebookTokenInvalid, "Facebook's answers about this token disagree.")
        }
        let permissions = me["permissions"]?["data"]?.arrayValue ?? []
        func names(_ status: String) -> [String] {
            permissions.filter { $0["status"]?.stringValue == status }.compactMap { $0["permission"]?.stringValue }
                .sorted()
        }
        let granted = names("granted")
        return FacebookIdentity(
            appID: app.id, subject: subject, profile: FieldMapping.normalizeGraph(me.objectValue ?? [:]),
            granted: granted.isEmpty ? (data["scopes"]?.arrayValue ?? []).compactMap(\.stringValue).sorted() : granted,
            declined: names("declined"), kind: .classic)
    }

    /// The served app the token belongs to, and `debug_token`'s `data` when finding the app
    /// already inspected the token.
    private func owningApp(
        of token: String
    ) async throws -> (ServerConfiguration.FacebookApp, JSONValue?) {
        guard let primary = apps.first else {
            throw APIError(.internalServerError, .internalError, "No app configured.")
        }
        if apps.count == 1 { return (primary, nil) }
        let answer = try await graph.get("/app", query: [], bearer: token, app: nil)
        if let failure = answer.failure {
            guard failure.isProofRefusal else { throw FacebookTriage.userToken(failure) }
            // The token's app requires `appsecret_proof` on every call, and the proof needs the
            // secret of the app we are trying to find: ask each app's `debug_token` instead.
            for app in apps {
                do {
                    return (app, try await inspect(token, app: app))
                } catch let error as APIError where error.code == .facebookWrongApp {
                    continue
                }
            }
            throw APIError(.unauthorized, .facebookWrongApp, "This Facebook token was issued to another app.")
        }
        guard let id = answer.body["id"]?.stringValue, let app = apps.first(where: { $0.id == id }) else {
            throw APIError(.unauthorized, .facebookWrongApp, "This Facebook token was issued to another app.")
        }
        // The call was charged to the token's app, known only now.
        graph.record(answer, app: app.id)
        return (app, nil)
    }

    /// `debug_token` with `app`'s token (in the `Authorization` header): the token's `data`,
    /// checked (§4) to be a valid, unexpired user token of `app`.
    private func inspect(_ token: String, app: ServerConfiguration.FacebookApp) async throws -> JSONValue {
        let answer = try await graph.get(
            "/debug_token", query: [("input_token", token)], bearer: app.appToken, app: app.id)
        if let failure = answer.failure { throw observed(FacebookTriage.inspection(failure), app: app) }
        guard let data = answer.body["data"], data.isObject else {
            throw APIError.facebookUnavailable("Facebook answered debug_token without data; try again shortly.")
        }
        // Facebook inspected the token with our app token: our credentials are good.
        health.credentials(of: app.id, accepted: true)
        guard data["is_valid"] == .bool(true) else {
            // Facebook often omits the subcode (§6.3); an expiry in the past still says why.
            if isPast(data["expires_at"]) {
                throw APIError(.unauthorized, .facebookTokenExpired, "The Facebook access token has expired.")
            }
            throw FacebookTriage.userToken(
                GraphFailure(data["error"], status: answer.status)
                    ?? GraphFailure(status: answer.status, code: 190, message: "is_valid false without an error"))
        }
        guard data["type"]?.stringValue == "USER" else {
            throw APIError.notUserToken
        }
        // Facebook answers 400 for another app's token (handled above); this guards any answer that
        // would still name another app.
        guard data["app_id"]?.stringValue == app.id else {
            throw APIError(.unauthorized, .facebookWrongApp, "This Facebook token was issued to another app.")
        }
        if isPast(data["expires_at"]) {
            throw APIError(.unauthorized, .facebookTokenExpired, "The Facebook access token has expired.")
        }
        return data
    }

    /// `/me` with the person's token (in the `Authorization` header) and `app`'s proof; its
    /// errors are judged by `verify`, once `debug_token` has spoken.
    private func me(
        _ token: String, app: ServerConfiguration.FacebookApp, mapping: FieldMapping
    ) async throws -> GraphClient.Answer {
        let proof = AppSecretProof.compute(accessToken: token, secret: app.secret)
        return try await graph.get(
            "/me", query: [("fields", mapping.graphFields), ("appsecret_proof", proof)], bearer: token, app: nil)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "|"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    /// `expires_at` in the past (0 means never, §4).
    private func isPast(_ expiresAt: JSONValue?) -> Bool {
        guard let seconds = expiresAt?.intValue, seconds != 0 else { return false }
        return Double(seconds) <= clock().timeIntervalSince1970
    }

    /// `error`, after telling the health tracker when it says our credentials were refused.
    private func observed(_ error: APIError, app: ServerConfiguration.FacebookApp) -> APIError {
        health.observe(error, appID: app.id)
        return error
    }
}

extension ServerConfiguration.FacebookApp {
    /// The literal app token `APPID|SECRET` (§3.3): no extra call to obtain one. It travels only in
    /// `Authorization` headers and form bodies, never in a URL.
    var appToken: String { "\(id)|\(secret)" }
}
