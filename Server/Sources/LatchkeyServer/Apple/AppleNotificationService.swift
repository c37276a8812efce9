import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto
import Logging

/// `POST /v1/apple/notifications`: Apple's server-to-server notifications (Apple, "Processing
/// changes for Sign in with Apple accounts"). Apple sends `{"payload": "<JWS>"}` with no other
/// authentication, so the JWS is the only trust: RS256 with a key Apple publishes, `iss` Apple's,
/// `aud` one of the configured client ids, not expired, and each `jti` applied once (spent in the
/// change's own transaction). `events` is a JSON string in the claims; `event_time` is in
/// milliseconds.
struct AppleNotificationService: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore
    let keys: KeySetCache
    let logger: Logger

    /// How long after `iat` a notification without `exp` is taken, and its `jti` remembered: Apple
    /// retries a delivery that failed, but not for a week.
    static let maximumAge: TimeInterval = 7 * 86_400

    /// A refused notification: its reason goes into the audit row and the log, the client gets
    /// only the typed error.
    struct Refusal: Error, Sendable {
        let reason: String
    }

    /// Verifies and applies one notification.
    /// - Returns: what the store did, or `nil` for an event type this server does not act on.
    /// - Throws: `apple_notification_invalid` (recorded in the audit log, nothing changed).
    func receive(_ payload: String) async throws -> ProviderEventOutcome? {
        let now = configuration.clock()
        do {
            guard let event = try await verify(payload, now: now) else { return nil }
            let outcome = try await store.applyProviderEvent(event, now: now)
            // Apple retries until it gets a 2xx: a notification applied already is answered as
            // done, and changes nothing.
            logger.info(
                "latchkey.apple.notification",
                metadata: ["latchkey.apple.event": "\(event.kind.rawValue)", "latchkey.apple.outcome": "\(outcome)"])
            return outcome
        } catch let refusal as Refusal {
            logger.notice(
                "latchkey.apple.notification_refused", metadata: ["latchkey.error.cause": "\(refusal.reason)"])
            try await store.recordEvent(
                AuditEvent(
                    type: .providerEventRejected, userID: "",
                    detail: ["provider": "apple", "reason": .string(refusal.reason)]),
                now: now)
            throw APIError(
                .badRequest, .appleNotificationInvalid,
                "This notification was refused: it is not signed by Apple for this app, is expired, or is malformed."
            )
        }
    }

    /// The event `payload` carries, once every check passed; `nil` for a type not acted on.
    func verify(_ payload: String, now: Date) async throws -> ProviderEvent? {
        let token: LimitedLoginToken
        do {
            token = try LimitedLoginToken(payload)
            try token.verifySignature(with: try await keys.key(kid: token.kid))
        } catch let failure as IDTokenFailure {
            let reason =
                switch failure {
                case .unknownKey: "unknown_key"
                case .signature: "signature"
                default: "malformed"
                }
            throw Refusal(reason: reason)
        }
        let claims = token.jws.claims
        guard let issuer = claims["iss"]?.stringValue, ServerConfiguration.AppleSettings.issuers.contains(issuer) else {
            throw Refusal(reason: "issuer")
        }
        let audiences =
            claims["aud"]?.stringValue.map { [$0] } ?? (claims["aud"]?.arrayValue ?? []).compactMap(\.stringValue)
        guard audiences.contains(where: configuration.apple.clientIDs.contains) else {
            throw Refusal(reason: "audience")
        }
        let skew = configuration.signIn.clockSkew
        guard let iat = claims["iat"]?.intValue.map(TimeInterval.init), iat <= now.timeIntervalSince1970 + skew else {
            throw Refusal(reason: "issued_at")
        }
        let expires = claims["exp"]?.intValue.map(TimeInterval.init) ?? iat + Self.maximumAge
        guard expires + skew > now.timeIntervalSince1970, now.timeIntervalSince1970 - iat <= Self.maximumAge + skew
        else { throw Refusal(reason: "expired") }
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256 else {
            throw Refusal(reason: "jti")
        }
        // A JSON string (Apple's documented shape); an object is taken too.
        let events: JSONValue
        if let text = claims["events"]?.stringValue {
            guard text.utf8.count <= 8192, let parsed = try? JSONValue.decode(Data(text.utf8)) else {
                throw Refusal(reason: "events")
            }
            events = parsed
        } else if let object = claims["events"], object.objectValue != nil {
            events = object
        } else {
            throw Refusal(reason: "events")
        }
        guard let type = events["type"]?.stringValue, let subject = events["sub"]?.stringValue, !subject.isEmpty,
            subject.utf8.count <= 255
        else { throw Refusal(reason: "events") }
        let kind: ProviderEvent.Kind
        switch type {
        case "consent-revoked": kind = .consentRevoked
        // Both spellings are in use: Apple's page reads `account-deleted`, deliveries seen say
        // `account-delete` (docs/apple.md).
        case "account-delete", "account-deleted": kind = .accountDeleted
        case "email-disabled": kind = .emailDisabled
        case "email-enabled": kind = .emailEnabled
        default:
            logger.notice(
                "latchkey.apple.notification_unknown_type", metadata: ["latchkey.apple.event": "\(type.prefix(64))"])
            return nil
        }
        var detail: [String: JSONValue] = ["type": .string(type)]
        let milliseconds = events["event_time"]?.intValue
        if let milliseconds { detail["event_time_ms"] = .int(milliseconds) }
        if let privateEmail = AppleIDTokenVerifier.flag(events["is_private_email"]) {
            detail["is_private_email"] = .bool(privateEmail)
        }
        return ProviderEvent(
            kind: kind, provider: "apple", subject: subject, eventID: "apple:\(jti)",
            eventIDExpiresAt: Date(timeIntervalSince1970: max(expires, iat + Self.maximumAge) + skew),
            detail: .object(detail), endsAllSessions: configuration.facebook.deauthorizeEnds == .allSessions,
            issuedAt: Self.issuedAt(eventTimeMilliseconds: milliseconds, iat: iat))
    }

    /// When the event happened: `events.event_time` (milliseconds) when Apple gives it, else the
    /// token's `iat`. A delayed or retried `consent-revoked` older than the identity's last
    /// sign-in is out of date (`Verdicts.providerEvent`), as Facebook's deauthorize is by its
    /// `issued_at`. A time far from `iat` (before 2001, or after the token) is not believed.
    static func issuedAt(eventTimeMilliseconds: Int?, iat: TimeInterval) -> Date {
        guard let milliseconds = eventTimeMilliseconds else { return Date(timeIntervalSince1970: iat) }
        let seconds = TimeInterval(milliseconds) / 1000
        guard seconds >= 978_307_200, seconds <= iat + 1 else { return Date(timeIntervalSince1970: iat) }
        return Date(timeIntervalSince1970: seconds)
    }
}
