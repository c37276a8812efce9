import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyCrypto

/// Checks the `client_secret` a backend sends to `/auth/token` and `/auth/revoke`: an ES256 JWT
/// it signs with the team's Sign in with Apple key ("Creating a client secret"). Every failure is
/// the same `invalid_client` at Apple, so this answers only yes or no.
enum AppleClientSecret {
    /// The `aud` Apple requires.
    static let audience = "https://appleid.apple.com"
    /// The longest lifetime Apple accepts: 15,777,000 seconds (six months).
    static let maximumLifetime = 15_777_000
    /// How far ahead of Apple's clock `iat` may be, for backends whose clock runs a little fast.
    static let clockSkew = 60
    /// Bounds `iat` and `exp` so the date arithmetic below cannot overflow on a hostile value.
    private static let plausibleTimes = 0...(1 << 40)

    /// Whether `secret` is the team's client secret for `clientID` at `now`.
    ///
    /// The signature is checked as raw `r || s` and either S is accepted: JWT libraries (and
    /// CryptoKit) produce high-S signatures too, and Apple is not known to refuse them, unlike
    /// Latchkey's own tokens (`P256LowS`).
    static func isValid(_ secret: String, clientID: String, registration: AppleRegistration, now: Date) -> Bool {
        guard let jws = CompactJWS(secret), jws.header["alg"]?.stringValue == "ES256",
            jws.header["kid"]?.stringValue == registration.keyID, jws.signature.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature),
            registration.publicKey.isValidSignature(signature, for: jws.signingInput)
        else { return false }
        let claims = jws.claims
        guard claims["iss"]?.stringValue == registration.teamID, claims["aud"]?.stringValue == audience,
            claims["sub"]?.stringValue == clientID, registration.clientIDs.contains(clientID),
            let issuedAt = claims["iat"]?.intValue, let expiresAt = claims["exp"]?.intValue,
            plausibleTimes.contains(issuedAt), plausibleTimes.contains(expiresAt)
        else { return false }
        let current = Int(now.timeIntervalSince1970)
        // Apple measures the six months from its own clock as well as from `iat`.
        return expiresAt > current && issuedAt <= current + clockSkew && expiresAt - issuedAt <= maximumLifetime
            && expiresAt - current <= maximumLifetime
    }
}
