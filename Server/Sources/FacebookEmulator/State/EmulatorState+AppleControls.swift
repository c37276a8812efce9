import Foundation
import LatchkeyAPI
import LatchkeyCrypto

extension EmulatorState {
    // MARK: Keys

    /// Apple's published keys, the signing one first.
    var appleKeys: [SigningKey] { apple?.keys ?? [] }

    /// Makes a fresh key Apple's signing key; the earlier ones stay published (Apple lists
    /// several keys at once) until removed.
    func rotateAppleKey() throws {
        guard apple != nil else { return }
        let key = try SigningKey.generateApple(now: now())
        apple?.keys.insert(key, at: 0)
    }

    /// Stops publishing a key; the signing key cannot be removed.
    func removeAppleKey(kid: String) -> Bool {
        guard let index = apple?.keys.firstIndex(where: { $0.kid == kid }), index > 0 else { return false }
        apple?.keys.remove(at: index)
        return true
    }

    // MARK: Tokens

    /// Every refresh and access token `/auth/token` issued, in issue order.
    func appleTokens() -> [AppleToken] {
        guard let apple else { return [] }
        return apple.tokenOrder.compactMap { apple.tokens[$0] }
    }

    /// Revokes one refresh token, as Apple does on a password change, without ending the
    /// authorization or notifying anyone. `nil` when the emulator never issued it.
    func revokeAppleRefreshToken(_ value: String) -> Bool? {
        guard let token = apple?.tokens[value], token.kind == .refresh else { return nil }
        guard token.revokedAt == nil else { return false }
        apple?.tokens[value]?.revokedAt = now()
        apple?.tokens[value]?.revokedBy = "control"
        return true
    }

    /// Revokes every live token of a person, likewise silently; returns how many.
    func revokeAppleTokens(personKey: String) -> Int {
        apple?.revokeTokens(personKey: personKey, at: now(), by: "control") ?? 0
    }

    // MARK: Notifications

    /// Signs a server-to-server notification and applies its effect: consent revocation and
    /// account deletion end the authorization and revoke the person's tokens, as at Apple.
    /// - Returns: the JWS and its `jti`.
    func appleNotification(
        person: Person, type: AppleEventType, audience: String
    ) throws -> (
        payload: String, jti: String
    )? {
        guard var apple, let key = apple.keys.first else { return nil }
        let current = now()
        var event: [String: JSONValue] = [
            "type": .string(type.rawValue), "sub": .string(apple.subject(person.key)),
            "event_time": .int(Int((current.timeIntervalSince1970 * 1000).rounded(.down))),
        ]
        if type.carriesEmail {
            // The events concern Hide My Email forwarding, so they name the relay address; captures
            // write the flag as a string.
            event["email"] = .string(AppleIdentity.relayEmail(teamID: apple.registration.teamID, personKey: person.key))
            event["is_private_email"] = "true"
        }
        let issuedAt = Int(current.timeIntervalSince1970)
        let jti = RandomToken.alphanumeric(22)
        let claims: JSONValue = [
            "iss": .string(Self.appleIssuer), "aud": .string(audience), "iat": .int(issuedAt),
            "exp": .int(issuedAt + 86_400), "jti": .string(jti),
            // A JSON string inside the JSON claims: Apple's wire format, which receivers must parse twice.
            "events": .string(String(decoding: JSONValue.object(event).encoded(), as: UTF8.self)),
        ]
        let payload = try JWS.compact(
            header: ["kid": .string(key.kid), "alg": "RS256"], payload: claims, signature: .rs256(key))
        if type.endsAuthorization {
            apple.consents[person.key] = nil
            apple.revokeTokens(personKey: person.key, at: current, by: "notification")
        }
        self.apple = apple
        return (payload, jti)
    }
}
