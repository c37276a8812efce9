import Crypto
import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto
import NIOCore

/// Issues and verifies Latchkey session tokens.
///
/// Access tokens are ES256 JWTs (`iss`, `sub` = user id, `aud` = `latchkey`, `sid`, `iat`, `exp`,
/// `jti`, and how the session was authenticated: `amr`, `aal`) that app backends verify offline
/// with `/.well-known/jwks.json`. Refresh tokens are 256
/// random bits, stored only as SHA-256 hashes.
struct SessionTokens: Sendable {
    /// The signing keys, kept current by `SessionKeyRefresher`.
    let keys: SessionKeys
    let origin: ServerOrigin
    let accessTokenLifetime: TimeInterval
    let refreshTokenLifetime: TimeInterval
    /// Tokens already verified (signature, issuer, audience), until their expiry.
    let verified = VerifiedTokenCache()

    static let audience = "latchkey"

    /// The `iss` of access tokens: the server's public URL.
    var issuer: String { origin.url }

    /// Claims of a verified access token.
    struct AccessClaims: Sendable {
        let userID: String
        let sessionID: String
        /// The token says its user is a guest (`is_anonymous`), as it was when the token was issued.
        var anonymous = false
        /// The second factor the token's session proved (its `amr`), at sign-in or a step-up.
        var secondFactor: SecondFactorKind?
        /// The token's `aal`: 2 when its session proved a second factor.
        var aal: Int { secondFactor == nil ? 1 : 2 }
    }

    /// A session about to open: the store's record of it and the refresh token its answer carries.
    struct Opening: Sendable {
        /// What the store writes (the token only as its hash).
        var record: NewSession
        /// The refresh token, for the answer only.
        let refreshToken: String
        /// The session's id.
        var id: String { record.id }
        /// How it is authenticated: what its tokens say.
        var assurance: SessionAssurance { SessionAssurance(method: record.method, secondFactor: record.secondFactor) }
    }

    /// A new session at `now` with a fresh refresh token living `refreshTokenLifetime`, opened by
    /// `method` from `client`.
    /// - Parameter id: its id; a code's redemption passes `""` (the code names the session).
    func opening(
        at now: Date, method: SessionMethod, client: ClientInfo, id: String = SessionTokens.randomToken(bytes: 16)
    ) -> Opening {
        let refresh = Self.newRefreshToken()
        return Opening(
            record: NewSession(
                id: id, refreshTokenHash: refresh.hash, createdAt: now,
                refreshExpiresAt: now.addingTimeInterval(refreshTokenLifetime), method: method, client: client),
            refreshToken: refresh.token)
    }

    /// A fresh refresh token and its hash.
    static func newRefreshToken() -> (token: String, hash: Data) {
        let token = randomToken(bytes: 32)
        return (token, hash(token))
    }

    static func hash(_ refreshToken: String) -> Data { Data(SHA256.hash(data: Data(refreshToken.utf8))) }

    /// URL-safe random identifier (`LatchkeyCrypto.RandomToken`).
    static func randomToken(bytes count: Int) -> String { RandomToken.base64URL(bytes: count) }

    /// A signed access token. `anonymous` adds `is_anonymous: true` (a guest); the claim is left
    /// out for everyone else, so a full user's token is unchanged by the feature. `amr` (left out
    /// when empty: a session from before it was recorded) and `aal` say how the session was
    /// authenticated (`SessionAssurance`).
    func accessToken(
        userID: String, sessionID: String, anonymous: Bool = false, assurance: SessionAssurance, now: Date
    ) throws -> String {
        let issuedAt = Int(now.timeIntervalSince1970)
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "sub": .string(userID), "aud": .string(Self.audience), "sid": .string(sessionID),
            "iat": .int(issuedAt), "exp": .int(issuedAt + Int(accessTokenLifetime)),
            "jti": .string(Self.randomToken(bytes: 12)), "aal": .int(assurance.aal),
        ]
        let amr = assurance.amr
        if !amr.isEmpty { claims["amr"] = .array(amr.map(JSONValue.string)) }
        if anonymous { claims["is_anonymous"] = true }
        let claimsObject = JSONValue.object(claims)
        let signing = keys.current.signing
        let header: JSONValue = ["alg": "ES256", "typ": "JWT", "kid": .string(signing.kid)]
        return try CompactJWS.make(header: header, claims: claimsObject, sign: signing.sign)
    }

    /// The session body for a new access token and `refreshToken`.
    func body(
        userID: String, sessionID: String, refreshToken: String, anonymous: Bool = false,
        assurance: SessionAssurance, now: Date
    ) throws -> SessionBody {
        SessionBody(
            accessToken: try accessToken(
                userID: userID, sessionID: sessionID, anonymous: anonymous, assurance: assurance, now: now),
            expiresIn: Int(accessTokenLifetime), refreshToken: refreshToken,
            refreshTokenExpiresIn: Int(refreshTokenLifetime))
    }

    /// Verifies signature, issuer, audience and expiry; the session's revocation is the caller's check.
    func verify(_ token: String, now: Date) throws -> AccessClaims {
        if let claims = verified.claims(for: token, now: now) { return claims }
        return try verifyUncached(token, now: now)
    }

    /// The full check (signature, issuer, audience, expiry), remembering the token when it passes.
    ///
    /// A token has exactly one valid encoding: the signature must be low-S (`P256LowS`) and its
    /// segment unpadded, as `accessToken` writes it. `CompactJWS` tolerates `=` padding for
    /// Facebook's sake, and padding lies outside the signed input, so `token + "=="` would otherwise
    /// verify as a second spelling of the same token.
    func verifyUncached(_ token: String, now: Date) throws -> AccessClaims {
        // The same reader and header rules as Facebook's id tokens (`LatchkeyCrypto`): ES256 only,
        // no key-source or `crit` headers, a well-formed kid, before the key ring is consulted.
        guard token.utf8.last != UInt8(ascii: "="), let jws = CompactJWS(token, maximumLength: 4096),
            let kid = try? JOSEHeader.check(jws.header, algorithm: "ES256"),
            let key = keys.current.verifying[kid], key.verify(jws.signature, for: jws.signingInput)
        else { throw APIError.unauthorized }
        let claims = jws.claims
        guard claims["iss"]?.stringValue == issuer, claims["aud"]?.stringValue == Self.audience,
            let exp = claims["exp"]?.intValue, TimeInterval(exp) > now.timeIntervalSince1970,
            let userID = claims["sub"]?.stringValue, let sessionID = claims["sid"]?.stringValue
        else { throw APIError.unauthorized }
        let claimsFound = AccessClaims(
            userID: userID, sessionID: sessionID, anonymous: claims["is_anonymous"] == .bool(true),
            secondFactor: claims["amr"]?.arrayValue.flatMap { amr in
                SecondFactorKind.allCases.first { kind in amr.contains(.string(kind.amr)) }
            })
        verified.remember(token, claims: claimsFound, expiresAt: TimeInterval(exp), now: now)
        return claimsFound
    }
}
