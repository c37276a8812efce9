import Crypto
import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

/// Verifies the identity token an app got from Sign in with Apple (Apple, "Verifying a user"):
/// RS256 with a `kid` Apple publishes at `/auth/keys` (never the header's `alg` choosing), `iss`
/// Apple's (either of the two it issues), `aud` one of the configured client ids, `exp` and `iat`
/// within the sign-in's age and skew, and the nonce: the claim must be the SHA-256 hex of the raw
/// nonce sent (Apple copies what the app gave it, and the app gives it the hash), unless the
/// token says `nonce_supported: false` and has none (older devices).
struct AppleIDTokenVerifier: Sendable {
    let keys: KeySetCache
    let clientIDs: Set<String>
    let clockSkew: TimeInterval
    let maximumAge: TimeInterval
    let clock: @Sendable () -> Date

    init(keys: KeySetCache, configuration: ServerConfiguration) {
        self.keys = keys
        self.clientIDs = Set(configuration.apple.clientIDs)
        self.clockSkew = configuration.signIn.clockSkew
        self.maximumAge = configuration.signIn.idTokenMaxAge
        self.clock = configuration.clock
    }

    /// The person `token` proves, or the typed error of the first check that failed.
    func verify(_ token: String, nonce: String) async throws -> AppleIdentity {
        do {
            let parsed = try LimitedLoginToken(token)
            // The header is checked before this lookup, so a forged kid costs no key fetch.
            guard let key = try await keys.key(kid: parsed.kid) else {
                throw APIError(
                    .unauthorized, .idTokenUnknownKey, "The id token is signed with a key Apple does not publish.")
            }
            try parsed.verifySignature(with: key)
            return try claims(parsed.jws, nonce: nonce)
        } catch let failure as IDTokenFailure {
            throw APIError(failure)
        }
    }

    /// The claims' checks, after the signature.
    func claims(_ jws: CompactJWS, nonce: String) throws(IDTokenFailure) -> AppleIdentity {
        let claims = jws.claims
        guard let issuer = claims["iss"]?.stringValue, ServerConfiguration.AppleSettings.issuers.contains(issuer) else {
            throw .issuer
        }
        let audiences =
            claims["aud"]?.stringValue.map { [$0] } ?? (claims["aud"]?.arrayValue ?? []).compactMap(\.stringValue)
        guard let clientID = audiences.first(where: clientIDs.contains) else { throw .audience }
        let policy = IDTokenPolicy(
            issuer: .oneOf([issuer]), audiences: clientIDs, clockSkew: clockSkew, maximumAge: maximumAge)
        let expiresAt = try LimitedLoginToken.checkTimes(claims, policy: policy, now: clock().timeIntervalSince1970)
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty, subject.utf8.count <= 255 else {
            throw .malformed("The id token has no subject.")
        }
        try Self.checkNonce(claims, sent: nonce)
        var profile: [String: JSONValue] = ["sub": .string(subject)]
        if let email = claims["email"]?.stringValue, !email.isEmpty, email.utf8.count <= 320 {
            profile["email"] = .string(email)
        }
        for name in ["email_verified", "is_private_email"] {
            if let flag = Self.flag(claims[name]) { profile[name] = .bool(flag) }
        }
        if let status = claims["real_user_status"]?.intValue { profile["real_user_status"] = .int(status) }
        // Spent in the sign-in's transaction: the code's single use at Apple already stops a replay
        // of the pair, and this stops one of the token should Apple ever answer a code twice.
        let digest = Hex.encode(SHA256.hash(data: jws.signature))
        return AppleIdentity(
            clientID: clientID, subject: subject, profile: profile,
            singleUse: SingleUseClaims(
                jti: "apple:\(digest)", jtiExpiresAt: Date(timeIntervalSince1970: expiresAt + clockSkew),
                serverNonce: nil))
    }

    /// Apple's nonce rule. The raw nonce is required; the claim must be its SHA-256 hex (compared
    /// in constant time, case-insensitively as hex); a token without a nonce passes only when it
    /// says `nonce_supported: false` (Apple: the nonce may then be treated as optional).
    static func checkNonce(_ claims: JSONValue, sent: String) throws(IDTokenFailure) {
        guard !sent.isEmpty else { throw .nonceMismatch }
        guard sent.utf8.count <= 512 else { throw .nonceTooLong }
        guard let claim = claims["nonce"]?.stringValue, !claim.isEmpty else {
            if flag(claims["nonce_supported"]) == false { return }
            throw .nonceMismatch
        }
        let hashed = Hex.encode(SHA256.hash(data: Data(sent.utf8)))
        guard ConstantTime.equals(claim.lowercased(), hashed) else { throw .nonceMismatch }
    }

    /// A claim Apple sends as a boolean or as the string `"true"`/`"false"`.
    static func flag(_ value: JSONValue?) -> Bool? {
        switch value {
        case .bool(let flag)?: flag
        case .string(let text)?: text == "true" ? true : (text == "false" ? false : nil)
        default: nil
        }
    }
}

/// What an Apple id token proves about the person.
struct AppleIdentity: Sendable {
    /// The client id the token was issued to (`aud`): the code is exchanged under it.
    let clientID: String
    /// Apple's `sub`: stable for the person across every app of the developer team.
    let subject: String
    /// Apple's fields (`email`, `email_verified`, `is_private_email`, `real_user_status`), and
    /// `given_name`/`family_name`/`name` once the app's first-authorization name is added.
    var profile: [String: JSONValue]
    /// What the sign-in's transaction spends.
    let singleUse: SingleUseClaims

    /// The key the per-identity abuse limit counts under.
    var limitKey: String { "apple/" + subject }

    /// The identity as stored: provider `apple`, the client id as its app, first and last seen now.
    func stored(at now: Date) -> StoredIdentity {
        StoredIdentity(
            provider: "apple", subject: subject, appID: clientID,
            grantedPermissions: profile["email"] == nil ? [] : ["email"], firstSeen: now, lastSeen: now)
    }

    /// Adds the name the app got on the person's first authorization (Apple sends it nowhere else).
    mutating func addName(given: String?, family: String?) {
        if let given { profile["given_name"] = .string(given) }
        if let family { profile["family_name"] = .string(family) }
        let full = [given, family].compactMap { $0 }.joined(separator: " ")
        if !full.isEmpty { profile["name"] = .string(full) }
    }
}
