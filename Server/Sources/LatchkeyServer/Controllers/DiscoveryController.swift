import HTTPTypes
import Hummingbird
import LatchkeyAPI
import NIOCore

/// What clients discover the server by: its signing keys (JWKS), its OAuth metadata (RFC 8414,
/// also as the OpenID-style document), and its OpenAPI contract.
struct DiscoveryController: Controller {
    let tokens: SessionTokens
    let origin: ServerOrigin

    /// The contract (docs/openapi.json), encoded once.
    static let openAPIBody = ByteBuffer(string: OpenAPIDocument.json)

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.get, "/.well-known/jwks.json") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.cacheControl] = "public, max-age=\(Int(SessionKeyRing.jwksMaxAge))"
            return Response(
                status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: tokens.keys.current.jwks)))
        }
        router.route(.get, "/openapi.json") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.cacheControl] = "public, max-age=300"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: Self.openAPIBody))
        }
        router.route(.get, "/.well-known/openid-configuration") { _, _ in try Response.json(metadata) }
        router.route(.get, "/.well-known/oauth-authorization-server") { _, _ in try Response.json(metadata) }
    }

    /// RFC 8414 metadata; also served as the OpenID-style document, which clients probe first.
    var metadata: JSONValue {
        let base = origin.url
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
