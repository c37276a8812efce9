import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

extension EmulatorState {
    /// A renderer for `personKey` as seen by `appID`; `nil` without a grant (the app is not installed).
    func renderer(appID: String, personKey: String, baseURL: String) -> ProfileRenderer? {
        guard let person = people[personKey], let grant = grant(appID: appID, personKey: personKey) else {
            return nil
        }
        var friends: [(id: String, name: String)] = []
        if grant.granted.contains("user_friends") {
            for friendKey in person.friends {
                guard let friend = people[friendKey],
                    self.grant(appID: appID, personKey: friendKey)?.granted.contains("user_friends") == true
                else { continue }
                friends.append((EmulatorState.appScopedID(appID: appID, personKey: friendKey), friend.name))
            }
        }
        return ProfileRenderer(
            person: person, appID: appID, grant: grant, baseURL: baseURL, appFriends: friends,
            business: apps[appID]?.business)
    }

    /// Signs a Limited Login id token for a person with a grant (§7.2), optionally broken on purpose.
    /// - Parameters:
    ///   - nonce: copied verbatim; Facebook writes `""` when the login had none.
    ///   - accessToken: when issued beside an access token, its `at_hash` is included.
    /// - Returns: the compact JWT and its claims.
    func mintIDToken(
        appID: String, personKey: String, nonce: String?, accessToken: String?, baseURL: String,
        defect: IDTokenDefect? = nil
    ) throws -> (token: String, claims: JSONValue)? {
        guard let renderer = renderer(appID: appID, personKey: personKey, baseURL: baseURL),
            let key = activeKey
        else { return nil }
        let current = Int(now().timeIntervalSince1970)
        var issuedAt = current
        switch defect {
        case .expired: issuedAt = current - 7200
        case .staleIssuedAt: issuedAt = current - 1200
        case .futureIssuedAt: issuedAt = current + 900
        default: break
        }
        var claims = renderer.idTokenClaims()
        claims["iss"] = .string(issuer)
        claims["aud"] = .string(appID)
        claims["sub"] = .string(renderer.scopedID)
        claims["iat"] = .int(issuedAt)
        claims["exp"] = .int(issuedAt + 3600)
        claims["jti"] = .string(RandomToken.alphanumeric(4) + "." + RandomToken.hex(64))
        claims["nonce"] = .string(nonce ?? "")
        if let accessToken {
            let digest = SHA256.hash(data: Data(accessToken.utf8))
            claims["at_hash"] = .string(Base64URL.encode(Data(digest.prefix(16))))
        }
        var header: [String: JSONValue] = ["alg": "RS256", "typ": "JWT", "kid": .string(key.kid)]
        var signature = JWS.Signature.rs256(key)
        switch defect {
        case .wrongAudience: claims["aud"] = .string(appID == "1" ? "2" : "1" + appID)
        case .legacyIssuer: claims["iss"] = "https://facebook.com"
        case .wrongIssuer: claims["iss"] = "https://accounts.example.com"
        case .unknownKid: header["kid"] = .string(RandomToken.hex(40))
        case .missingKid: header["kid"] = nil
        case .algorithmNone:
            header["alg"] = "none"
            signature = .none
        case .algorithmHS256:
            header["alg"] = "HS256"
            signature = .hs256(Data(key.publicKeyPEM.utf8))
        case .badSignature: signature = .corruptedRS256(key)
        case .missingNonce: claims["nonce"] = nil
        case .missingJTI: claims["jti"] = nil
        case .expired, .staleIssuedAt, .futureIssuedAt, nil: break
        }
        let token = try JWS.compact(header: .object(header), payload: .object(claims), signature: signature)
        return (token, .object(claims))
    }
}
