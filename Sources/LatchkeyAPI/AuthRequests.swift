/// `POST /v1/auth/facebook`: exchange a Facebook credential for a Latchkey session.
///
/// Send exactly one of `accessToken` (classic login) or `idToken` (Limited Login, with `nonce`).
public struct FacebookExchangeRequest: Codable, Sendable, Equatable {
    /// A classic Facebook user access token.
    public var accessToken: String?
    /// A Limited Login OIDC id token.
    public var idToken: String?
    /// The raw nonce the app generated (the id token's `nonce` may be it or its SHA-256 hex).
    public var nonce: String?
    /// Facebook field → user property, e.g. `{"email": "email", "first_name": "givenName"}`.
    public var fieldsMapping: [String: String]?

    /// The JSON names: the SDK writes these and the server accepts no others.
    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case accessToken, idToken, nonce, fieldsMapping
    }

    /// Creates a request.
    public init(
        accessToken: String? = nil, idToken: String? = nil, nonce: String? = nil, fieldsMapping: [String: String]? = nil
    ) {
        self.accessToken = accessToken
        self.idToken = idToken
        self.nonce = nonce
        self.fieldsMapping = fieldsMapping
    }
}

extension FacebookExchangeRequest {
    /// The request as the JSON body the server reads (absent fields left out).
    public var json: JSONValue {
        var body: [String: JSONValue] = [:]
        body[CodingKeys.accessToken.stringValue] = accessToken.map(JSONValue.string)
        body[CodingKeys.idToken.stringValue] = idToken.map(JSONValue.string)
        body[CodingKeys.nonce.stringValue] = nonce.map(JSONValue.string)
        body[CodingKeys.fieldsMapping.stringValue] = fieldsMapping.map { .object($0.mapValues(JSONValue.string)) }
        return .object(body)
    }
}

/// `PATCH /v1/users/me`: change the signed-in user's app-writable properties.
public struct UserPropertiesUpdate: Codable, Sendable, Equatable {
    /// Property name → new value; `null` removes the property.
    public var properties: [String: JSONValue]

    /// The JSON names: the SDK writes these and the server accepts no others.
    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case properties
    }

    /// Creates an update.
    public init(properties: [String: JSONValue]) { self.properties = properties }

    /// The update as the JSON body the server reads.
    public var json: JSONValue { .object([CodingKeys.properties.stringValue: .object(properties)]) }
}

/// A Latchkey session: a short-lived access token (JWT) and a rotating refresh token.
public struct SessionBody: Codable, Sendable, Equatable {
    /// ES256 JWT for `Authorization: Bearer`, verifiable offline with `/.well-known/jwks.json`.
    public var accessToken: String
    /// Always `Bearer`.
    public var tokenType: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    /// Single-use token for `POST /v1/oauth/token` with `grant_type=refresh_token`.
    public var refreshToken: String
    /// Seconds until the refresh token expires if unused.
    public var refreshTokenExpiresIn: Int
    /// Facebook permissions granted, space-separated (RFC 6749 §5.1 `scope`); sent by the
    /// `authorization_code` grant, where they may differ from what the client asked for.
    public var scope: String?

    /// RFC 6749 §5.1 names, the same in the exchange answer and the token endpoint.
    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case refreshTokenExpiresIn = "refresh_token_expires_in"
        case scope
    }

    /// Creates a session body.
    public init(
        accessToken: String, expiresIn: Int, refreshToken: String, refreshTokenExpiresIn: Int, scope: String? = nil
    ) {
        self.scope = scope
        self.accessToken = accessToken
        self.tokenType = "Bearer"
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.refreshTokenExpiresIn = refreshTokenExpiresIn
    }
}

/// A linked sign-in provider account.
public struct IdentityBody: Codable, Sendable, Equatable {
    /// `facebook` (and `apple` once Sign in with Apple is configured).
    public var provider: String
    /// The provider's id for the person: Facebook's app-scoped user id.
    public var subject: String
    /// The provider app the subject is scoped to (a Facebook app id).
    public var appID: String
    /// Permissions granted at the last sign-in.
    public var grantedPermissions: [String]
    /// The first sign-in with this identity (or its linking), seconds since 1970.
    public var firstSignInAt: Int
    /// The last sign-in with this identity, seconds since 1970.
    public var lastSignInAt: Int

    enum CodingKeys: String, CodingKey {
        case provider, subject, grantedPermissions, firstSignInAt, lastSignInAt
        case appID = "appId"
    }

    /// Creates an identity body.
    public init(
        provider: String, subject: String, appID: String, grantedPermissions: [String], firstSignInAt: Int = 0,
        lastSignInAt: Int = 0
    ) {
        self.provider = provider
        self.subject = subject
        self.appID = appID
        self.grantedPermissions = grantedPermissions
        self.firstSignInAt = firstSignInAt
        self.lastSignInAt = lastSignInAt
    }

    /// Reads an identity; the sign-in times are optional so that answers of servers older than
    /// them still decode.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        provider = try container.decode(String.self, forKey: .provider)
        subject = try container.decode(String.self, forKey: .subject)
        appID = try container.decode(String.self, forKey: .appID)
        grantedPermissions = try container.decode([String].self, forKey: .grantedPermissions)
        firstSignInAt = try container.decodeIfPresent(Int.self, forKey: .firstSignInAt) ?? 0
        lastSignInAt = try container.decodeIfPresent(Int.self, forKey: .lastSignInAt) ?? 0
    }
}

/// A Latchkey user.
public struct UserBody: Codable, Sendable, Equatable {
    /// Random, URL-safe user id.
    public var id: String
    /// Mapped Facebook fields and app-set values.
    public var properties: [String: JSONValue]
    /// Linked provider accounts (none for a guest).
    public var identities: [IdentityBody]
    /// Creation time, seconds since 1970.
    public var createdAt: Int
    /// A guest made by `POST /v1/auth/anonymous` that no identity was linked to yet.
    public var isAnonymous: Bool

    enum CodingKeys: String, CodingKey {
        case id, properties, identities, createdAt, isAnonymous
    }

    /// Creates a user body.
    public init(
        id: String, properties: [String: JSONValue], identities: [IdentityBody], createdAt: Int,
        isAnonymous: Bool = false
    ) {
        self.id = id
        self.properties = properties
        self.identities = identities
        self.createdAt = createdAt
        self.isAnonymous = isAnonymous
    }

    /// Reads a user; `isAnonymous` is optional so that answers of servers older than guests
    /// still decode.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        properties = try container.decode([String: JSONValue].self, forKey: .properties)
        identities = try container.decode([IdentityBody].self, forKey: .identities)
        createdAt = try container.decode(Int.self, forKey: .createdAt)
        isAnonymous = try container.decodeIfPresent(Bool.self, forKey: .isAnonymous) ?? false
    }
}

/// The answer of `POST /v1/auth/facebook`.
public struct SignInBody: Codable, Sendable, Equatable {
    /// The signed-in user.
    public var user: UserBody
    /// Whether this login created the user.
    public var isNewUser: Bool
    /// Permissions the person granted to the Facebook app.
    public var grantedPermissions: [String]
    /// Permissions the person declined.
    public var declinedPermissions: [String]
    /// The new session.
    public var session: SessionBody
    /// Only when a recovery code completed the sign-in (`POST /v1/auth/factor`): how many unused
    /// codes the person has left. Absent otherwise.
    public var recoveryCodesLeft: Int?

    /// Creates a sign-in body.
    public init(
        user: UserBody, isNewUser: Bool, grantedPermissions: [String], declinedPermissions: [String],
        session: SessionBody, recoveryCodesLeft: Int? = nil
    ) {
        self.recoveryCodesLeft = recoveryCodesLeft
        self.user = user
        self.isNewUser = isNewUser
        self.grantedPermissions = grantedPermissions
        self.declinedPermissions = declinedPermissions
        self.session = session
    }
}

/// The answer of `POST /v1/auth/nonce`.
public struct NonceBody: Codable, Sendable, Equatable {
    /// The single-use nonce to pass to Facebook's `LoginConfiguration`.
    public var nonce: String
    /// Seconds until it expires.
    public var expiresIn: Int

    /// Creates a nonce body.
    public init(nonce: String, expiresIn: Int) {
        self.nonce = nonce
        self.expiresIn = expiresIn
    }
}

/// `POST /v1/oauth/token`, form-encoded (RFC 6749 §4.1.3, §6): the two grants the server answers.
/// The SDK sends `form`; the server reads exactly `Field`'s names (and ignores others, as RFC 6749
/// §3.2 asks of a token endpoint).
public enum TokenRequest: Sendable, Equatable {
    /// Rotates a refresh token.
    case refresh(refreshToken: String)
    /// Redeems an Easy Login authorization code with its PKCE verifier.
    case authorizationCode(code: String, redirectURI: String, codeVerifier: String, clientID: String)

    /// The form's field names.
    public enum Field: String, CodingKey, CaseIterable, Sendable {
        case grantType = "grant_type"
        case refreshToken = "refresh_token"
        case code
        case redirectURI = "redirect_uri"
        case codeVerifier = "code_verifier"
        case clientID = "client_id"
        case scope
    }

    /// The form's fields, in order.
    public var form: [(String, String)] {
        switch self {
        case .refresh(let refreshToken):
            [(Field.grantType.rawValue, "refresh_token"), (Field.refreshToken.rawValue, refreshToken)]
        case .authorizationCode(let code, let redirectURI, let codeVerifier, let clientID):
            [
                (Field.grantType.rawValue, "authorization_code"), (Field.code.rawValue, code),
                (Field.redirectURI.rawValue, redirectURI), (Field.codeVerifier.rawValue, codeVerifier),
                (Field.clientID.rawValue, clientID),
            ]
        }
    }
}

/// `POST /v1/auth/apple` (and `POST /v1/users/me/identities` with `provider: "apple"`): exchange
/// what Sign in with Apple gave the app (`ASAuthorizationAppleIDCredential`) for a Latchkey session.
public struct AppleExchangeRequest: Codable, Sendable, Equatable {
    /// The credential's `identityToken`, as text.
    public var idToken: String
    /// The credential's `authorizationCode`, as text: the server exchanges it with Apple (once,
    /// within five minutes) and keeps the refresh token to revoke at account deletion.
    public var authorizationCode: String
    /// The raw nonce: the request to Apple carried its SHA-256 hex.
    public var nonce: String
    /// The credential's `fullName.givenName`: Apple gives the name on the first authorization only.
    public var givenName: String?
    /// The credential's `fullName.familyName`.
    public var familyName: String?
    /// The `redirect_uri` of Apple's authorization, for the web flow (a Services ID): Apple
    /// exchanges such a code only with the same URI. `nil` for the native flow.
    public var redirectURI: String?

    /// The JSON names: the SDK writes these and the server accepts no others (`provider` is read
    /// only by the linking endpoint).
    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case idToken, authorizationCode, nonce, givenName, familyName
        case redirectURI = "redirectUri"
    }

    /// Creates a request.
    public init(
        idToken: String, authorizationCode: String, nonce: String, givenName: String? = nil, familyName: String? = nil,
        redirectURI: String? = nil
    ) {
        self.idToken = idToken
        self.authorizationCode = authorizationCode
        self.nonce = nonce
        self.givenName = givenName
        self.familyName = familyName
        self.redirectURI = redirectURI
    }

    /// The request as the JSON body the server reads (absent names left out).
    public var json: JSONValue {
        var body: [String: JSONValue] = [
            CodingKeys.idToken.stringValue: .string(idToken),
            CodingKeys.authorizationCode.stringValue: .string(authorizationCode),
            CodingKeys.nonce.stringValue: .string(nonce),
        ]
        body[CodingKeys.givenName.stringValue] = givenName.map(JSONValue.string)
        body[CodingKeys.familyName.stringValue] = familyName.map(JSONValue.string)
        body[CodingKeys.redirectURI.stringValue] = redirectURI.map(JSONValue.string)
        return .object(body)
    }
}
