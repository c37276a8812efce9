import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import NIOCore

/// Verifies a Limited Login id token (facebook-protocol.md §7) with the shared checks of
/// `LatchkeyCrypto.LimitedLoginToken` under the server's policy: RS256 only, `kid` published by
/// Facebook, `iss` one of the configured issuers, `aud` a served app, `exp`/`iat` within the
/// configured bounds, the nonce matching as `LATCHKEY_LIMITED_LOGIN_NONCE` says (the claim the
/// SHA-256 hex of the nonce sent by default), and each `jti` used once.
struct LimitedLoginVerifier: Sendable {
    let keys: KeySetCache
    let configuration: ServerConfiguration
    /// Built once: the policy is read on every login.
    let policy: IDTokenPolicy

    init(keys: KeySetCache, configuration: ServerConfiguration) {
        self.keys = keys
        self.configuration = configuration
        self.policy = IDTokenPolicy(
            issuer: .oneOf(configuration.facebook.issuers), audiences: Set(configuration.facebook.apps.map(\.id)),
            clockSkew: configuration.signIn.clockSkew, maximumAge: configuration.signIn.idTokenMaxAge,
            allowsMissingNonce: configuration.signIn.allowMissingNonce && !configuration.signIn.requireServerNonce,
            nonceMatching: configuration.signIn.limitedLoginNonce)
    }

    func verify(_ token: String, nonce: String?) async throws -> FacebookIdentity {
        let claims: LimitedLoginToken.Claims
        do {
            let parsed = try LimitedLoginToken(token)
            // The header is checked before this lookup, so a forged kid costs no key fetch.
            try parsed.verifySignature(with: try await keys.key(kid: parsed.kid))
            claims = try parsed.claims(policy: policy, nonce: nonce, now: configuration.clock())
        } catch let failure as IDTokenFailure {
            throw APIError(failure)
        }
        // Server nonces are base64url: anything else was never issued, and is refused before the
        // store sees it (PostgreSQL's text cannot even hold a NUL byte).
        if configuration.signIn.requireServerNonce, let nonce, Base64URL.decode(nonce) == nil {
            throw APIError.nonceInvalid
        }
        // The jti (and a server nonce) are spent inside the sign-in transaction, so a failure later
        // leaves the token usable, and a replay reports itself before any nonce is touched.
        let singleUse = SingleUseClaims(
            jti: "\(claims.appID):\(claims.jti)",
            jtiExpiresAt: Date(timeIntervalSince1970: claims.expiresAt + configuration.signIn.clockSkew),
            serverNonce: configuration.signIn.requireServerNonce ? nonce : nil)
        let profile = Self.profile(from: claims.all, subject: claims.subject)
        return FacebookIdentity(
            appID: claims.appID, subject: claims.subject, profile: profile,
            granted: Self.impliedPermissions(claims.all),
            declined: [], kind: .limitedLogin, singleUse: singleUse)
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
