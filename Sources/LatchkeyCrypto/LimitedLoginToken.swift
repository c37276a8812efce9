import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// A Limited Login id token on its way through the checks (facebook-protocol.md §7), in the order
/// both the server and the SDK run them: the structure and header first (no I/O, so every forged
/// header is refused before a key fetch), then the caller finds the key for `kid` (a cache on the
/// server, a fetched set on the device), then the signature, then the claims under a policy.
public struct LimitedLoginToken: Sendable {
    /// The split token.
    public let jws: CompactJWS
    /// The header's key id, already checked to be well formed.
    public let kid: String

    /// The claims that passed every check.
    public struct Claims: Sendable {
        /// The `aud` entry that is an accepted app.
        public let appID: String
        /// `sub`: the app-scoped Facebook user id.
        public let subject: String
        /// `jti`, for the single-use check.
        public let jti: String
        /// `exp`, seconds since 1970.
        public let expiresAt: TimeInterval
        /// Every claim, for the profile.
        public let all: JSONValue
    }

    /// Splits `token` and checks its header: RS256 only and the `JOSEHeader` rules.
    public init(_ token: String) throws(IDTokenFailure) {
        guard let jws = CompactJWS(token) else { throw .malformed("The id token is not a well-formed JWT.") }
        do {
            kid = try JOSEHeader.check(jws.header, algorithm: "RS256")
        } catch {
            throw .header(error)
        }
        self.jws = jws
    }

    /// Checks the signature with Facebook's key for `kid`; `nil` means Facebook publishes none.
    public func verifySignature(with key: RSAPublicKey?) throws(IDTokenFailure) {
        guard let key else { throw .unknownKey }
        guard RS256.isValid(jws.signature, for: jws.signingInput, key: key) else { throw .signature }
    }

    /// Checks the claims under `policy`.
    /// - Parameters:
    ///   - nonce: the nonce sent with the token; the claim must equal it, or its SHA-256 hex, as
    ///     `policy.nonceMatching` says (both conventions exist: Facebook's SDK echoes what it was
    ///     given, and Firebase-style apps give it the hash of a raw value they keep), compared in
    ///     constant time.
    ///   - now: the current time.
    public func claims(policy: IDTokenPolicy, nonce: String?, now: Date) throws(IDTokenFailure) -> Claims {
        let claims = jws.claims
        guard let issuer = claims["iss"]?.stringValue, policy.accepts(issuer: issuer) else { throw .issuer }
        let audiences =
            claims["aud"]?.stringValue.map { [$0] } ?? (claims["aud"]?.arrayValue ?? []).compactMap(\.stringValue)
        guard let appID = audiences.first(where: policy.audiences.contains) else { throw .audience }
        let expiresAt = try Self.checkTimes(claims, policy: policy, now: now.timeIntervalSince1970)
        guard let subject = claims["sub"]?.stringValue, !subject.isEmpty, subject.utf8.count <= 128 else {
            throw .malformed("The id token has no subject.")
        }
        try Self.checkNonce(claims["nonce"]?.stringValue, sent: nonce, policy: policy)
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256 else {
            throw .malformed("The id token has no jti.")
        }
        return Claims(appID: appID, subject: subject, jti: jti, expiresAt: expiresAt, all: claims)
    }

    /// Checks `exp` and `iat` under `policy` (skew, maximum age) and returns `exp`. Both are
    /// required (a token without `exp` never expires). Shared with Apple's id tokens.
    public static func checkTimes(
        _ claims: JSONValue, policy: IDTokenPolicy, now: TimeInterval
    ) throws(IDTokenFailure)
        -> TimeInterval
    {
        guard let exp = claims["exp"]?.intValue.map(TimeInterval.init),
            let iat = claims["iat"]?.intValue.map(TimeInterval.init)
        else { throw .malformed("The id token lacks exp or iat.") }
        let skew = policy.clockSkew
        guard exp + skew > now else { throw .expired }
        guard iat <= now + skew, now - iat <= policy.maximumAge + skew else { throw .issuedAt }
        return exp
    }

    static func checkNonce(_ claim: String?, sent: String?, policy: IDTokenPolicy) throws(IDTokenFailure) {
        let claim = claim ?? ""
        guard let sent, !sent.isEmpty else {
            guard claim.isEmpty, policy.allowsMissingNonce else { throw .nonceMismatch }
            return
        }
        guard sent.utf8.count <= 512 else { throw .nonceTooLong }
        let hashed = Hex.encode(SHA256.hash(data: Data(sent.utf8)))
        // Both comparisons run whatever the policy, so the time taken says nothing of which matched.
        let matchesRaw = ConstantTime.equals(claim, sent)
        let matchesHash = ConstantTime.equals(claim.lowercased(), hashed)
        let matches =
            switch policy.nonceMatching {
            case .hashed: matchesHash
            case .raw: matchesRaw
            case .either: matchesRaw || matchesHash
            }
        guard !claim.isEmpty, matches else { throw .nonceMismatch }
    }
}
