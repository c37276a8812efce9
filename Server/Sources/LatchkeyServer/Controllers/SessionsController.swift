import Foundation
import Hummingbird
import LatchkeyAPI
import LatchkeyShared

/// Sessions and tokens: the OAuth token endpoint (a refresh token's rotation, an Easy Login
/// code's redemption) and signing out of one session or all.
struct SessionsController: Controller {
    let sessions: SessionService
    let easyLogin: EasyLoginService
    let limits: AbuseLimits
    let reading: RequestReading
    /// Checks the token and that its session is active.
    let sessionChecked: BearerAuthentication

    /// The token endpoint's fields: the wire type's, which the SDK sends (others are ignored, as
    /// RFC 6749 §3.2 asks).
    static let tokenFields = TokenRequest.Field.fieldNames

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.post, "/v1/oauth/token") { request, context in
            // One token endpoint for both grants; its errors take RFC 6749 §5.2's shape.
            do {
                return try await token(request, context)
            } catch {
                return APIError.from(error, logger: context.logger).oauthResponse()
            }
        }
        let signedIn = router.group().add(middleware: sessionChecked)
        signedIn.route(.post, "/v1/auth/logout") { _, context in
            try await sessions.end(try context.authenticatedSession())
            return Response(status: .noContent)
        }
        signedIn.route(.post, "/v1/auth/logout-all") { _, context in
            let count = try await sessions.endAll(try context.authenticatedSession())
            return try Response.json(["revokedSessions": count])
        }
        signedIn.route(.get, "/v1/users/me/sessions") { _, context in
            try Response.json(try await sessions.list(try context.authenticatedSession()))
        }
        signedIn.route(.delete, "/v1/users/me/sessions/{id}") { _, context in
            let claims = try context.authenticatedSession()
            // Session ids are 22 URL-safe characters; anything far longer names none.
            guard let id = context.parameters.get("id"), !id.isEmpty, id.utf8.count <= 64 else {
                throw APIError(.notFound, .notFound, "No active session of yours has this id.")
            }
            try await sessions.end(sessionID: id, claims)
            return Response(status: .noContent)
        }
    }

    func token(_ request: Request, _ context: LatchkeyRequestContext) async throws -> Response {
        let address = limits.client(request, context)
        try await limits.enforce(limits.rules.tokenPerAddress, key: address)
        var fields = try await reading.fields(request, allowed: Self.tokenFields, ignoringUnknown: true)
        if let clientID = try Self.basicClientID(request.headers[.authorization]) {
            let name = TokenRequest.Field.clientID.rawValue
            guard fields[name] == nil || fields[name] == .string(clientID) else {
                throw APIError.invalidRequest("client_id differs from the Authorization header.")
            }
            fields[name] = .string(clientID)
        }
        let granted: Response
        switch try RequestReading.string(fields, TokenRequest.Field.grantType.rawValue, maxLength: 64) {
        case "refresh_token":
            guard
                let presented = try RequestReading.string(
                    fields, TokenRequest.Field.refreshToken.rawValue, maxLength: 256), !presented.isEmpty
            else { throw APIError.invalidRequest("refresh_token is required.") }
            granted = try Response.json(try await sessions.refresh(presented))
        case "authorization_code":
            granted = try Response.json(
                try await easyLogin.redeem(fields, client: limits.clientInfo(request, context)))
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
}
