import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import Logging
import NIOCore

/// Every HTTP endpoint, thin: read and validate the request, call a service, encode the answer.
struct Routes: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore
    let signIn: SignInService
    let tokens: SessionTokens
    let easyLogin: EasyLoginService
    let origin: ServerOrigin
    /// What the server last heard from Facebook, for `/ready`.
    let health: FacebookHealth
    /// The Graph usage Facebook last reported per app, for `/ready`.
    let usage: FacebookUsageMonitor
    /// Abuse limits by client address.
    let limits: AbuseLimits
    let reading: RequestReading

    func register(on router: Router<LatchkeyRequestContext>) {
        /// Registers a handler for `method` and `path`.
        func route<Output: ResponseGenerator>(
            _ method: HTTPRequest.Method, _ path: String,
            _ handler: @escaping @Sendable (Request, LatchkeyRequestContext) async throws -> Output
        ) {
            router.on(RouterPath(path), method: method, use: handler)
        }
        route(.get, "/health") { _, _ in try Response.json(["status": "ok"]) }
        route(.get, "/ready") { _, context in
            // Facebook's state comes from the last real answers, never from a call per probe: this
            // endpoint is public. Only this node's own state decides the status code (the database,
            // its signing keys): Facebook trouble hits every node alike, and refresh and `/v1/users/me` keep working without Facebook.
            var databaseUp = true
            do {
                try await store.ping()
            } catch {
                databaseUp = false
                context.logger.warning("latchkey.ready.database_down", metadata: ["latchkey.error.cause": "\(error)"])
            }
            // Stored keys this server refused at its last refresh: it signs on with the ring it has
            // but would not start again, so it should leave the load balancer before it restarts.
            let keyRefusal = tokens.keys.refusal
            var body: [String: JSONValue] = [
                "status": databaseUp && keyRefusal == nil ? "ready" : "unavailable",
                "database": databaseUp ? "ok" : "unreachable", "signing_keys": keyRefusal == nil ? "ok" : "refused",
                "facebook": .string(health.status.rawValue),
                // Per app: the last X-App-Usage (and business-use-case) figures, their level and time.
                "facebook_usage": usage.report,
            ]
            if let keyRefusal { body["signing_keys_reason"] = .string(keyRefusal) }
            var response = try Response.json(JSONValue.object(body))
            response.headers[.cacheControl] = "no-store"
            if !databaseUp || keyRefusal != nil {
                response.status = .serviceUnavailable
                response.headers[.retryAfter] = "5"
            }
            return response
        }
        route(.get, "/.well-known/jwks.json") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.cacheControl] = "public, max-age=\(Int(SessionKeyRing.jwksMaxAge))"
            return Response(
                status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: tokens.keys.current.jwks)))
        }
        route(.get, "/openapi.json") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.cacheControl] = "public, max-age=300"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: Self.openAPIBody))
        }
        route(.get, "/.well-known/openid-configuration") { _, _ in try Response.json(discovery) }
        route(.get, "/.well-known/oauth-authorization-server") { _, _ in try Response.json(discovery) }
        route(.get, "/v1/oauth/authorize") { request, context in
            await easyLogin.authorize(
                request.uri.query, address: limits.client(request, context), logger: context.logger)
        }
        route(.get, ServerConfiguration.facebookCallbackPath) { request, context in
            await easyLogin.callback(
                request.uri.query, address: limits.client(request, context), logger: context.logger)
        }

        route(.post, "/v1/auth/facebook") { request, context in
            let address = try await limits.enforceSignIn(request, context)
            let fields = try await reading.fields(request, allowed: SignInService.requestFields)
            return try Response.json(try await signIn.signIn(fields, client: address, logger: context.logger))
        }
        route(.post, "/v1/auth/nonce") { request, context in
            try await limits.enforce(limits.rules.noncePerAddress, key: limits.client(request, context))
            // No fields, but the body is still read: anything other than nothing or `{}` is refused.
            _ = try await reading.fields(request, allowed: [])
            let nonce = SessionTokens.randomToken(bytes: 24)
            let lifetime = configuration.nonceLifetime
            let now = configuration.clock()
            try await store.storeNonce(nonce, expiresAt: now.addingTimeInterval(lifetime), now: now)
            return try Response.json(NonceBody(nonce: nonce, expiresIn: Int(lifetime)))
        }
        route(.post, "/v1/oauth/token") { request, context in
            // One token endpoint for both grants; its errors take RFC 6749 §5.2's shape.
            do {
                let address = limits.client(request, context)
                try await limits.enforce(limits.rules.tokenPerAddress, key: address)
                var fields = try await reading.fields(
                    request,
                    allowed: [
                        "grant_type", "refresh_token", "client_id", "scope", "code", "redirect_uri", "code_verifier",
                    ], ignoringUnknown: true)
                if let clientID = try Self.basicClientID(request.headers[.authorization]) {
                    guard fields["client_id"] == nil || fields["client_id"] == .string(clientID) else {
                        throw APIError.invalidRequest("client_id differs from the Authorization header.")
                    }
                    fields["client_id"] = .string(clientID)
                }
                let granted: Response
                switch try RequestReading.string(fields, "grant_type", maxLength: 64) {
                case "refresh_token": granted = try await refresh(fields)
                case "authorization_code": granted = try Response.json(try await easyLogin.redeem(fields))
                case nil: throw APIError.invalidRequest("grant_type is required.")
                case .some:
                    // Not echoed: error_description stays free of request text.
                    throw APIError(
                        .badRequest, .unsupportedGrantType, "grant_type must be authorization_code or refresh_token.")
                }
                // Only failed grants count against the address: behind a carrier NAT, many people's
                // scheduled refreshes share one address, and a success says nothing of abuse.
                await limits.refund(limits.rules.tokenPerAddress, key: address)
                return granted
            } catch {
                return APIError.from(error, logger: context.logger).oauthResponse()
            }
        }
        route(.get, "/v1/users/me") { request, _ in
            // The session check and the read are one store operation here: the hottest read path.
            let claims = try verifiedClaims(request)
            guard let user = try await store.activeUser(id: claims.userID, sessionID: claims.sessionID) else {
                throw APIError.sessionEnded
            }
            return try Response.json(UserBody(user))
        }
        route(.patch, "/v1/users/me") { request, _ in
            let claims = try await authenticate(request)
            let fields = try await reading.fields(request, allowed: ["properties"])
            guard let properties = fields["properties"]?.objectValue else {
                throw APIError.invalidRequest("Send {\"properties\": {…}}.")
            }
            for name in properties.keys where !configuration.userWritableProperties.contains(name) {
                throw APIError(.forbidden, .propertyNotWritable, "Users may not change property '\(name)'.")
            }
            guard properties.values.allSatisfy({ $0.encoded().count <= 4096 }) else {
                throw APIError.invalidRequest("A property value is too large.")
            }
            guard
                let user = try await store.updateProperties(
                    userID: claims.userID, properties: properties, now: configuration.clock())
            else { throw APIError.unauthorized }
            return try Response.json(UserBody(user))
        }
        route(.post, "/v1/auth/logout") { request, _ in
            let claims = try await authenticate(request)
            try await store.revokeSession(id: claims.sessionID, now: configuration.clock())
            return Response(status: .noContent)
        }
        route(.post, "/v1/auth/logout-all") { request, _ in
            let claims = try await authenticate(request)
            let count = try await store.revokeSessions(userID: claims.userID, now: configuration.clock())
            return try Response.json(["revokedSessions": count])
        }
    }

    /// The contract (docs/openapi.json), encoded once.
    static let openAPIBody = ByteBuffer(string: OpenAPIDocument.json)

    /// The bearer token's claims, after checking its session is still active.
    func authenticate(_ request: Request) async throws -> SessionTokens.AccessClaims {
        let claims = try verifiedClaims(request)
        guard try await store.isSessionActive(id: claims.sessionID) else { throw APIError.sessionEnded }
        return claims
    }

    /// The bearer token's claims (signature, issuer, audience, expiry); the session is not checked.
    func verifiedClaims(_ request: Request) throws -> SessionTokens.AccessClaims {
        guard let header = request.headers[.authorization], let token = Self.bearerToken(header) else {
            throw APIError.unauthorized
        }
        return try tokens.verify(token, now: configuration.clock())
    }

    /// The token of `Authorization: Bearer <token>` (scheme case-insensitive, RFC 6750 §2.1),
    /// spaces around it dropped; `nil` for another scheme.
    ///
    /// Read on the UTF-8 bytes: this runs on every authenticated request, and going through
    /// `Character`s (reversing a string to trim it) was nearly half of `GET /v1/users/me`'s CPU.
    static func bearerToken(_ header: String) -> String? {
        let scheme = "bearer ".utf8
        var bytes = header.utf8[...]
        guard bytes.count > scheme.count,
            zip(bytes.prefix(scheme.count), scheme).allSatisfy({ byte, expected in
                byte == expected || (expected != UInt8(ascii: " ") && byte | 0x20 == expected)
            })
        else { return nil }
        bytes = bytes.dropFirst(scheme.count)
        while bytes.first == UInt8(ascii: " ") { bytes = bytes.dropFirst() }
        while bytes.last == UInt8(ascii: " ") { bytes = bytes.dropLast() }
        return String(Substring(bytes))
    }

    /// The client id of `Authorization: Basic base64(client_id:)`, as some OAuth libraries identify
    /// public clients (RFC 6749 §2.3.1); a non-empty password means a confidential client, which
    /// Latchkey does not register.
    static func basicClientID(_ header: String?) throws -> String? {
        guard let header, header.lowercased().hasPrefix("basic ") else { return nil }
        guard let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { throw APIError.invalidRequest("The Authorization header is not valid Basic credentials.") }
        guard text[text.index(after: colon)...].isEmpty else {
            throw APIError(.unauthorized, .clientUnknown, "Clients are public: send no client secret.")
        }
        return String(text[..<colon]).removingPercentEncoding ?? String(text[..<colon])
    }

    static let invalidRefreshToken = APIError(
        .badRequest, .refreshTokenInvalid, "The refresh token is unknown, expired or revoked.")

    /// `grant_type=refresh_token` (RFC 6749 §6) with rotation and reuse detection.
    func refresh(_ fields: [String: JSONValue]) async throws -> Response {
        guard let presented = try RequestReading.string(fields, "refresh_token", maxLength: 256), !presented.isEmpty
        else {
            throw APIError.invalidRequest("refresh_token is required.")
        }
        let hash = SessionTokens.hash(presented)
        // The family first, so its limit is checked before anything is spent: limiting after the
        // rotation would throw away the new token, and the app's retry with the old one would
        // then read as reuse and end the session.
        guard let family = try await store.refreshTokenFamily(hash: hash) else { throw Self.invalidRefreshToken }
        // A spent token is never limited: its rotation revokes the session, and a thief keeping the
        // family's budget full must not keep the app's reuse from being noticed.
        // An ended session's token is refused as such, not as a rate limit.
        guard !family.ended else { throw Self.invalidRefreshToken }
        if !family.spent { try await limits.enforce(limits.rules.refreshPerSession, key: family.sessionID) }
        let now = configuration.clock()
        // The successor is derived from the token, not drawn at random: an app that lost the
        // answer and sends the same token again within the retry window is given the same
        // successor, on any server, rather than having its session revoked as a reuse.
        let successors = tokens.keys.current.refreshSuccessors(of: presented)
        let issued: (sessionID: String, userID: String, refreshToken: String)
        switch try await store.rotateRefreshToken(
            hash: hash, newHash: successors[0].hash, now: now,
            newExpiresAt: now.addingTimeInterval(configuration.refreshTokenLifetime),
            retryWindow: configuration.refreshRetryWindow, retryCandidates: successors.map(\.hash))
        {
        case .rotated(let sessionID, let userID):
            issued = (sessionID, userID, successors[0].token)
        case .retried(let sessionID, let userID, let successorHash):
            // A retry spends nothing, so limiting it here loses no token and hides no reuse; it
            // keeps a spent token from minting access tokens without end inside the window.
            try await limits.enforce(limits.rules.refreshPerSession, key: sessionID)
            // The store matched one of the candidates; a new access token goes with it.
            guard let successor = successors.first(where: { $0.hash == successorHash }) else {
                throw Self.invalidRefreshToken
            }
            issued = (sessionID, userID, successor.token)
        case .reused:
            // RFC 6749 §5.2: a bad grant is 400 (401 is for client authentication).
            throw APIError(
                .badRequest, .refreshTokenReused, "This refresh token was already used; the session has been revoked."
            )
        case .invalid:
            throw Self.invalidRefreshToken
        case .userDisabled:
            throw APIError(.badRequest, .userDisabled, "This account is disabled.")
        }
        return try Response.json(
            try tokens.body(
                userID: issued.userID, sessionID: issued.sessionID, refreshToken: issued.refreshToken, now: now))
    }

    var discovery: JSONValue {
        let base = origin.url
        // RFC 8414 metadata; also served as the OpenID-style document, which clients probe first.
        return [
            "issuer": .string(base), "jwks_uri": .string("\(base)/.well-known/jwks.json"),
            "authorization_endpoint": .string("\(base)/v1/oauth/authorize"),
            "token_endpoint": .string("\(base)/v1/oauth/token"),
            "response_types_supported": ["code"], "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": true,
            "id_token_signing_alg_values_supported": ["ES256"],
        ]
    }
}
