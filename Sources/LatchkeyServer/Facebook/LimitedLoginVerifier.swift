import Crypto
import Foundation
import HTTPTypes
import LatchkeyAPI
import NIOCore
import _CryptoExtras

/// Verifies a Limited Login id token (facebook-protocol.md §7): RS256 only, `kid` required and
/// published by Facebook, `iss` accepted, `aud` a served app, `exp`/`iat` within bounds, the nonce
/// matching (raw or SHA-256 hex: both conventions exist), and each `jti` used once.
struct LimitedLoginVerifier: Sendable {
    let keys: KeySetCache
    let configuration: ServerConfiguration

    func verify(_ token: String, nonce: String?) async throws -> FacebookIdentity {
        guard let jws = CompactJWS(token) else { throw invalid("The id token is not a well-formed JWT.") }
        try verifyHeader(jws.header)
        let kid = jws.header["kid"]?.stringValue ?? ""
        guard let key = try await keys.key(kid: kid) else {
            throw APIError(
                .unauthorized, .idTokenUnknownKey, "The id token is signed with a key Facebook does not publish.")
        }
        guard
            key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: jws.signature), for: SHA256.hash(data: jws.signingInput),
                padding: .insecurePKCS1v1_5)
        else { throw invalid("The id token's signature is invalid.") }
        let claims = jws.claims
        let now = configuration.clock().timeIntervalSince1970
        try verifyIssuer(claims)
        let appID = try verifyAudience(claims)
        let expiresAt = try verifyTimes(claims, now: now)
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty, subject.count <= 128 else {
            throw invalid("The id token has no subject.")
        }
        try verifyNonce(claims["nonce"]?.stringValue, sent: nonce)
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty, jti.count <= 256 else {
            throw invalid("The id token has no jti.")
        }
        // The jti (and a server nonce) are spent inside the sign-in transaction, so a failure later
        // leaves the token usable, and a replay reports itself before any nonce is touched.
        let singleUse = SingleUseClaims(
            jti: "\(appID):\(jti)", jtiExpiresAt: Date(timeIntervalSince1970: expiresAt + configuration.clockSkew),
            serverNonce: configuration.requireServerNonce ? nonce : nil)
        let profile = Self.profile(from: claims, subject: subject)
        return FacebookIdentity(
            appID: appID, subject: subject, profile: profile, granted: Self.impliedPermissions(claims), declined: [],
            kind: .limitedLogin, singleUse: singleUse)
    }

    private func invalid(_ message: String) -> APIError { APIError(.unauthorized, .idTokenInvalid, message) }

    func verifyHeader(_ header: JSONValue) throws {
        // Only RS256: accepting the header's `alg` would open the none and HS256-confusion attacks.
        guard header["alg"]?.stringValue == "RS256" else { throw invalid("The id token must be signed with RS256.") }
        guard let kid = header["kid"]?.stringValue, !kid.isEmpty, kid.count <= 256 else {
            throw invalid("The id token's header has no kid.")
        }
    }

    func verifyIssuer(_ claims: JSONValue) throws {
        guard let issuer = claims["iss"]?.stringValue, configuration.issuers.contains(issuer) else {
            throw APIError(.unauthorized, .idTokenWrongIssuer, "The id token was not issued by an accepted issuer.")
        }
    }

    /// `aud` may be a string or an array (RFC 7519 §4.1.3); one served app must be in it.
    func verifyAudience(_ claims: JSONValue) throws -> String {
        let audiences =
            claims["aud"]?.stringValue.map { [$0] } ?? (claims["aud"]?.arrayValue ?? []).compactMap(\.stringValue)
        guard let appID = audiences.first(where: { configuration.app($0) != nil }) else {
            throw APIError(.unauthorized, .idTokenWrongAudience, "The id token was issued to another app.")
        }
        return appID
    }

    /// Returns `exp`. Facebook's SDKs allow ten minutes since `iat`; the window here is configurable,
    /// with a small skew for clock differences.
    func verifyTimes(_ claims: JSONValue, now: TimeInterval) throws -> TimeInterval {
        guard let exp = claims["exp"]?.intValue.map(TimeInterval.init),
            let iat = claims["iat"]?.intValue.map(TimeInterval.init)
        else { throw invalid("The id token lacks exp or iat.") }
        let skew = configuration.clockSkew
        guard exp + skew > now else { throw APIError(.unauthorized, .idTokenExpired, "The id token has expired.") }
        guard iat <= now + skew, now - iat <= configuration.idTokenMaxAge + skew else {
            throw APIError(
                .unauthorized, .idTokenIssuedAtInvalid,
                "The id token was issued too long ago (or in the future); log in again.")
        }
        return exp
    }

    /// The claim must equal the raw nonce or its SHA-256 hex; compared in constant time.
    func verifyNonce(_ claim: String?, sent: String?) throws {
        let claim = claim ?? ""
        guard let sent, !sent.isEmpty else {
            guard claim.isEmpty, configuration.allowMissingNonce, !configuration.requireServerNonce else {
                throw APIError(
                    .unauthorized, .nonceMismatch, "Send the nonce used for this login along with the id token.")
            }
            return
        }
        guard sent.count <= 512 else { throw APIError.invalidRequest("nonce is too long") }
        let hashed = Hex.encode(SHA256.hash(data: Data(sent.utf8)))
        let matchesRaw = ConstantTime.equals(claim, sent)
        let matchesHash = ConstantTime.equals(claim.lowercased(), hashed)
        guard !claim.isEmpty, matchesRaw || matchesHash else {
            throw APIError(.unauthorized, .nonceMismatch, "The id token's nonce does not match the nonce sent.")
        }
    }

    /// The same field names as Graph (§7.2 claims renamed), so one mapping serves both logins.
    static func profile(from claims: JSONValue, subject: String) -> [String: JSONValue] {
        let renames: [(claim: String, field: String)] = [
            ("name", "name"), ("given_name", "first_name"), ("middle_name", "middle_name"),
            ("family_name", "last_name"),
            ("email", "email"), ("picture", "picture"), ("user_birthday", "birthday"), ("user_gender", "gender"),
            ("user_link", "link"), ("user_age_range", "age_range"), ("user_friends", "friends"),
        ]
        var profile: [String: JSONValue] = ["id": .string(subject)]
        for (claim, field) in renames { if let value = claims[claim] { profile[field] = value } }
        for (claim, field) in [("user_location", "location"), ("user_hometown", "hometown")] {
            if let value = claims[claim] { profile[field] = value["name"] ?? value }
        }
        return profile
    }

    /// Limited Login carries no permission list; the claims present show what was granted.
    static func impliedPermissions(_ claims: JSONValue) -> [String] {
        var permissions: Set<String> = ["public_profile"]
        let byClaim = [
            "email": "email", "user_friends": "user_friends", "user_birthday": "user_birthday",
            "user_age_range": "user_age_range", "user_gender": "user_gender", "user_link": "user_link",
            "user_hometown": "user_hometown", "user_location": "user_location",
        ]
        for (claim, permission) in byClaim where claims[claim] != nil { permissions.insert(permission) }
        return permissions.sorted()
    }
}
