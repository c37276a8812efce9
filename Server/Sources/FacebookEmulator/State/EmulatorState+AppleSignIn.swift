import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

/// What the device asks Apple for in one Sign in with Apple authorization (control API
/// `POST /_emulator/apple/authorizations`).
struct AppleAuthorizationRequest: Sendable {
    var clientID: String
    /// `name` and `email`.
    var scopes: Set<String>
    /// The person picks Hide My Email on the consent sheet (only the first authorization asks).
    var hidesEmail: Bool
    /// Copied verbatim into the `nonce` claim: the app passes Apple a hash of its raw nonce.
    var nonce: String?
    var redirectURI: String?
    var shape: AppleTokenShape
    /// The identity token's lifetime in seconds.
    var lifetime: Int
    var defect: AppleIDTokenDefect?
}

/// What `ASAuthorizationAppleIDCredential` hands the app.
struct AppleCredential: Sendable {
    let identityToken: String
    let authorizationCode: String
    let subject: String
    /// Only on the first authorization (Apple shares these once).
    let email: String?
    let fullName: (given: String?, family: String?)?
    let claims: JSONValue
}

extension EmulatorState {
    static let appleIssuer = "https://appleid.apple.com"
    /// Apple: "The authorization code is single-use and valid for five minutes."
    static let appleCodeLifetime: TimeInterval = 300
    /// Apple's example token response: `expires_in` 3600.
    static let appleAccessTokenLifetime = 3600
    /// Id tokens from `/auth/token`: a day, as in captured payloads.
    static let appleExchangeIDTokenLifetime = 86_400

    /// A person by key or by Apple `sub`.
    func applePerson(_ reference: String) -> Person? {
        guard let apple else { return nil }
        if let person = people[reference] { return person }
        return allPeople().first { apple.subject($0.key) == reference }
    }

    /// One authorization on the device: records (or reuses) the person's consent, issues a code
    /// and signs the identity token. `nil` without an Apple registration.
    func authorizeApple(person: Person, _ request: AppleAuthorizationRequest) throws -> AppleCredential? {
        guard var apple else { return nil }
        // Released while changed, so the dictionaries are changed in place, not copied (each call
        // would otherwise copy every code and token issued so far). Written back below.
        self.apple = nil
        let current = now()
        let first = apple.consents[person.key] == nil
        var consent =
            apple.consents[person.key]
            ?? AppleConsent(id: apple.nextConsentID, scopes: [], hidesEmail: request.hidesEmail || person.email == nil)
        if first { apple.nextConsentID += 1 }
        consent.scopes.formUnion(request.scopes)
        apple.consents[person.key] = consent
        if apple.codes.count >= 10_000 {
            let cutoff = current.addingTimeInterval(-Self.appleCodeLifetime)
            apple.codes = apple.codes.filter { $0.value.issuedAt > cutoff }
        }
        let code = AppleCode(
            code: RandomString.appleToken(kind: "c"), clientID: request.clientID, personKey: person.key,
            consentID: consent.id, redirectURI: request.redirectURI, nonce: request.nonce, shape: request.shape,
            issuedAt: current, used: false)
        apple.codes[code.code] = code
        self.apple = apple
        let (token, claims) = try signAppleIDToken(
            person: person, clientID: request.clientID, shape: request.shape, nonce: request.nonce,
            hashed: ("c_hash", code.code), authTime: current, lifetime: request.lifetime, defect: request.defect)
        let email = appleEmail(person: person, consent: consent)
        return AppleCredential(
            identityToken: token, authorizationCode: code.code, subject: apple.subject(person.key),
            email: first && request.scopes.contains("email") ? email?.address : nil,
            fullName: first && request.scopes.contains("name") ? (person.firstName, person.lastName) : nil,
            claims: claims)
    }

    /// The address the team sees, and whether it is the relay's; `nil` without the email scope.
    func appleEmail(person: Person, consent: AppleConsent) -> (address: String, isPrivate: Bool)? {
        guard let apple, consent.scopes.contains("email") else { return nil }
        if !consent.hidesEmail, let email = person.email { return (email, false) }
        return (AppleIdentity.relayEmail(teamID: apple.registration.teamID, personKey: person.key), true)
    }

    /// Signs an Apple identity token.
    /// - Parameters:
    ///   - hashed: `c_hash` of the code (device) or `at_hash` of the access token (`/auth/token`).
    ///   - authTime: when the person authorized, `auth_time`.
    private func signAppleIDToken(
        person: Person, clientID: String, shape: AppleTokenShape, nonce: String?, hashed: (claim: String, of: String),
        authTime: Date, lifetime: Int, defect: AppleIDTokenDefect? = nil
    ) throws -> (String, JSONValue) {
        guard var apple, let key = apple.keys.first else { throw AppleError.serverError }
        let current = Int(now().timeIntervalSince1970)
        let issuedAt = defect == .expired ? current - lifetime - 60 : current
        let flag: (Bool) -> JSONValue = { shape.stringBooleans ? .string(String($0)) : .bool($0) }
        var claims: [String: JSONValue] = [
            "iss": .string(shape.issuer), "aud": .string(clientID), "iat": .int(issuedAt),
            "exp": .int(issuedAt + lifetime),
            "sub": .string(apple.subject(person.key)), "nonce_supported": true,
            "auth_time": .int(Int(authTime.timeIntervalSince1970)), "real_user_status": 2,
        ]
        if let nonce { claims["nonce"] = .string(nonce) }
        let digest = SHA256.hash(data: Data(hashed.of.utf8))
        claims[hashed.claim] = .string(Base64URL.encode(Data(digest.prefix(16))))
        if !shape.omitsEmail, let consent = apple.consents[person.key],
            let email = appleEmail(person: person, consent: consent)
        {
            claims["email"] = .string(email.address)
            claims["email_verified"] = flag(true)
            claims["is_private_email"] = flag(email.isPrivate)
        }
        var header: [String: JSONValue] = ["kid": .string(key.kid), "alg": "RS256"]
        var signature = JWS.Signature.rs256(key)
        switch defect {
        case .wrongKey:
            let stranger = try apple.unpublishedKey ?? SigningKey.generateApple(now: now())
            apple.unpublishedKey = stranger
            self.apple = apple
            signature = .rs256(stranger)
        case .unknownKid: header["kid"] = .string(RandomToken.alphanumeric(7))
        case .wrongAudience: claims["aud"] = "com.example.not-registered"
        case .wrongIssuer: claims["iss"] = "https://appleid.example.com"
        case .noNonceSupportedFalse:
            claims["nonce"] = nil
            claims["nonce_supported"] = false
        case .badSignature: signature = .corruptedRS256(key)
        case .expired, nil: break
        }
        let token = try JWS.compact(header: .object(header), payload: .object(claims), signature: signature)
        return (token, .object(claims))
    }

    // MARK: /auth/token

    /// `grant_type=authorization_code` for a client whose secret was checked.
    func exchangeAppleCode(_ value: String, clientID: String, redirectURI: String?) throws -> JSONValue {
        guard var apple else { throw AppleError.invalidClient }
        let current = now()
        // Apple does not say which check failed: every refusal of a code is the same answer.
        guard var code = apple.codes[value], code.clientID == clientID, !code.used,
            current < code.issuedAt.addingTimeInterval(Self.appleCodeLifetime),
            apple.consents[code.personKey]?.id == code.consentID,
            code.redirectURI == nil || code.redirectURI == redirectURI,
            let person = people[code.personKey]
        else { throw AppleError.invalidCode }
        self.apple = nil  // changed in place (see `authorizeApple`); written back below
        code.used = true
        apple.codes[value] = code
        let access = AppleToken(
            token: RandomString.appleToken(kind: "a"), kind: .access, clientID: clientID, personKey: person.key,
            issuedAt: current, expiresAt: current.addingTimeInterval(TimeInterval(Self.appleAccessTokenLifetime)),
            shape: code.shape, authTime: code.issuedAt)
        let refresh = AppleToken(
            token: RandomString.appleToken(kind: "r"), kind: .refresh, clientID: clientID, personKey: person.key,
            issuedAt: current, expiresAt: nil, shape: code.shape, authTime: code.issuedAt)
        apple.store(access)
        apple.store(refresh)
        self.apple = apple
        let (idToken, _) = try signAppleIDToken(
            person: person, clientID: clientID, shape: code.shape, nonce: code.nonce, hashed: ("at_hash", access.token),
            authTime: code.issuedAt, lifetime: Self.appleExchangeIDTokenLifetime)
        return [
            "access_token": .string(access.token), "token_type": "Bearer",
            "expires_in": .int(Self.appleAccessTokenLifetime), "refresh_token": .string(refresh.token),
            "id_token": .string(idToken),
        ]
    }

    /// `grant_type=refresh_token`: a new access token and id token, and no new refresh token
    /// (Apple: the refresh token is not returned when validating one).
    func refreshAppleToken(_ value: String, clientID: String) throws -> JSONValue {
        guard var apple else { throw AppleError.invalidClient }
        let current = now()
        guard let refresh = apple.tokens[value], refresh.kind == .refresh, refresh.clientID == clientID,
            refresh.isLive(at: current), let person = people[refresh.personKey]
        else { throw AppleError.invalidRefreshToken }
        self.apple = nil  // changed in place (see `authorizeApple`); written back below
        let access = AppleToken(
            token: RandomString.appleToken(kind: "a"), kind: .access, clientID: clientID, personKey: person.key,
            issuedAt: current, expiresAt: current.addingTimeInterval(TimeInterval(Self.appleAccessTokenLifetime)),
            shape: refresh.shape, authTime: refresh.authTime)
        apple.store(access)
        self.apple = apple
        let (idToken, _) = try signAppleIDToken(
            person: person, clientID: clientID, shape: refresh.shape, nonce: nil, hashed: ("at_hash", access.token),
            authTime: refresh.authTime, lifetime: Self.appleExchangeIDTokenLifetime)
        return [
            "access_token": .string(access.token), "token_type": "Bearer",
            "expires_in": .int(Self.appleAccessTokenLifetime), "id_token": .string(idToken),
        ]
    }

    // MARK: /auth/revoke

    /// Revokes a live token issued to `clientID` and ends the person's authorization, which
    /// invalidates the person's other tokens too ("Invalidate the tokens and associated user
    /// authorizations"); the next authorization shows the consent sheet again (TN3194).
    /// - Returns: whether a token was revoked; Apple answers 200 either way.
    @discardableResult
    func revokeAppleToken(_ value: String, clientID: String) -> Bool {
        guard var apple else { return false }
        let current = now()
        guard let token = apple.tokens[value], token.clientID == clientID, token.isLive(at: current) else {
            return false
        }
        self.apple = nil  // changed in place (see `authorizeApple`); written back below
        apple.tokens[value]?.revokedAt = current
        apple.tokens[value]?.revokedBy = "revoke"
        apple.consents[token.personKey] = nil
        apple.revokeTokens(personKey: token.personKey, at: current, by: "authorization_ended")
        self.apple = apple
        return true
    }
}
