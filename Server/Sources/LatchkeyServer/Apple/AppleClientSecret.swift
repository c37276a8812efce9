import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

/// The `client_secret` Apple's token and revocation endpoints take: an ES256 JWT signed with the
/// team's Sign in with Apple key (Apple, "Creating a client secret"). Minted for each call and
/// valid for minutes, so no six-month secret sits anywhere, nothing expires unnoticed, and the
/// operator configures the key once (the peers that take a pasted secret break silently after
/// six months: better-auth#1522, wso2 product-is#14248).
struct AppleClientSecret: Sendable {
    /// How long a minted secret is valid: one call, with room for clocks that disagree.
    static let lifetime: TimeInterval = 300
    /// Apple's audience for client secrets.
    static let audience = "https://appleid.apple.com"

    let teamID: String
    let keyID: String
    let key: P256.Signing.PrivateKey

    /// A secret for calls as `clientID`, issued at `now`.
    func mint(clientID: String, now: Date) throws -> String {
        let issued = Int(now.timeIntervalSince1970)
        let header: JSONValue = ["alg": "ES256", "kid": .string(keyID), "typ": "JWT"]
        let claims: JSONValue = [
            "iss": .string(teamID), "iat": .int(issued), "exp": .int(issued + Int(Self.lifetime)),
            "aud": .string(Self.audience), "sub": .string(clientID),
        ]
        let input = Base64URL.encode(header.encoded()) + "." + Base64URL.encode(claims.encoded())
        return input + "." + Base64URL.encode(try ES256.sign(Data(input.utf8), key: key))
    }
}
