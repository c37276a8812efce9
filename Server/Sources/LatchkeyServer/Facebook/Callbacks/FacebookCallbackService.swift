import Crypto
import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import Logging

/// Facebook's two callbacks (Meta, "Data Deletion Request Callback" and "Deauthorize Callback"
/// under Facebook Login): a form field `signed_request`, HMAC-SHA256 of the app secret, with the
/// person's app-scoped `user_id`, `algorithm` and `issued_at`.
///
/// The payload does not name the app, so each configured app's secret is tried in turn (each a
/// constant-time comparison, `SignedRequest.verify`); the one that verifies is the app it came
/// from. A request that is not signed by a configured app, not HMAC-SHA256, malformed, older than
/// `LATCHKEY_SIGNED_REQUEST_MAX_AGE` or from the future beyond the clock skew is a typed 400 and an
/// audit row, and changes nothing.
struct FacebookCallbackService: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore
    let origin: ServerOrigin
    let logger: Logger

    /// The form field Facebook posts.
    static let field = "signed_request"

    /// A verified signed request.
    struct Verified: Sendable {
        /// The app whose secret signed it.
        let appID: String
        /// The person's app-scoped user id.
        let subject: String
        /// Its `issued_at`, seconds since 1970.
        let issuedAt: Int
        /// A replay key: the hash of the signature, which no two requests share.
        let eventID: String
    }

    /// A refused callback: `reason` goes into the audit row and the log; the client gets `error`.
    struct Refusal: Error, Sendable {
        let reason: String
        let error: APIError
    }

    /// `POST /v1/facebook/deauthorize`: the person removed the app at Facebook. Their identity is
    /// marked deauthorized until their next sign-in, and the sessions it opened end (every
    /// session with `LATCHKEY_DEAUTHORIZE_ENDS=all-sessions`). A request delivered again changes
    /// nothing and is answered alike.
    func deauthorize(_ signedRequest: String) async throws {
        let now = configuration.clock()
        let verified = try await verify(signedRequest, now: now, callback: "deauthorize")
        let outcome = try await store.applyProviderEvent(
            ProviderEvent(
                kind: .consentRevoked, provider: "facebook", subject: verified.subject, eventID: verified.eventID,
                eventIDExpiresAt: expiry(of: verified),
                detail: ["app_id": .string(verified.appID), "callback": "deauthorize"],
                endsAllSessions: configuration.facebook.deauthorizeEnds == .allSessions,
                issuedAt: Date(timeIntervalSince1970: TimeInterval(verified.issuedAt))),
            now: now)
        logger.info("latchkey.facebook.deauthorized", metadata: ["latchkey.outcome": "\(outcome)"])
    }

    /// `POST /v1/facebook/data-deletion`: the person asked Facebook that the app delete their data.
    /// The request is stored and carried out as `LATCHKEY_DATA_DELETION_POLICY` says (in the
    /// background, or after an operator's review); the answer is Facebook's shape, the URL of its
    /// public status page and its confirmation code. A repeated request for the same person
    /// answers the same code (`Verdicts.deletionRepeat`); one for a person Latchkey holds nothing
    /// about is answered like any other.
    func requestDeletion(_ signedRequest: String) async throws -> DataDeletionAnswer {
        let now = configuration.clock()
        let verified = try await verify(signedRequest, now: now, callback: "data_deletion")
        let request = try await store.receiveDeletionRequest(
            NewDeletionRequest(
                id: RandomToken.base64URL(bytes: 12), code: RandomToken.base64URL(bytes: 16), provider: "facebook",
                subject: verified.subject, appID: verified.appID, policy: configuration.facebook.dataDeletionPolicy,
                propertyKeys: Self.facebookProperties(configuration),
                detail: ["app_id": .string(verified.appID), "issued_at": .int(verified.issuedAt)],
                issuedAt: Date(timeIntervalSince1970: TimeInterval(verified.issuedAt)), replayKey: verified.eventID,
                replayKeyExpiresAt: expiry(of: verified)),
            now: now)
        logger.info(
            "latchkey.facebook.data_deletion_requested",
            metadata: [
                "latchkey.deletion.id": "\(request.id)", "latchkey.deletion.status": "\(request.status.rawValue)",
            ])
        return DataDeletionAnswer(url: statusURL(code: request.code), confirmationCode: request.code)
    }

    /// The public status page's URL for `code`.
    func statusURL(code: String) -> String { origin.url + ServerConfiguration.facebookDataDeletionPath + "/" + code }

    /// The properties Facebook writes, which a deletion takes with the identity: the targets of
    /// the default field mapping and every property an app may map a field to.
    static func facebookProperties(_ configuration: ServerConfiguration) -> [String] {
        Array(
            Set(configuration.users.defaultFieldsMapping.values).union(
                configuration.users.clientMappableProperties ?? [])
        ).sorted()
    }

    /// When a request's replay key may be forgotten: once the request itself is too old to accept.
    private func expiry(of verified: Verified) -> Date {
        Date(timeIntervalSince1970: TimeInterval(verified.issuedAt))
            .addingTimeInterval(configuration.facebook.signedRequestMaxAge + configuration.signIn.clockSkew)
    }

    /// Verifies `signedRequest`, recording a refusal in the audit log before throwing its error.
    private func verify(_ signedRequest: String, now: Date, callback: String) async throws -> Verified {
        do {
            return try Self.verify(signedRequest, configuration: configuration, now: now)
        } catch {
            logger.notice(
                "latchkey.facebook.callback_refused",
                metadata: ["latchkey.callback": "\(callback)", "latchkey.error.cause": "\(error.reason)"])
            try await store.recordEvent(
                AuditEvent(
                    type: .providerEventRejected, userID: "",
                    detail: ["provider": "facebook", "callback": .string(callback), "reason": .string(error.reason)]),
                now: now)
            throw error.error
        }
    }

    /// The checks, in order: the signature under one of the apps' secrets and the algorithm
    /// (`SignedRequest.verify`), then the payload's `user_id` and `issued_at`.
    static func verify(
        _ signedRequest: String, configuration: ServerConfiguration, now: Date
    ) throws(Refusal) -> Verified {
        var payload: JSONValue?
        var appID = ""
        var failure = SignedRequest.Failure.signature
        for app in configuration.facebook.apps {
            do {
                payload = try SignedRequest.verify(signedRequest, secret: app.secret)
                appID = app.id
                break
            } catch {
                failure = error
                // Malformed under one secret is malformed under all; a wrong algorithm was signed
                // by this app, so no other app's secret will verify it.
                if error != .signature { break }
            }
        }
        guard let payload else {
            switch failure {
            case .malformed: throw invalid("malformed")
            case .algorithm: throw invalid("algorithm")
            case .signature: throw invalid("signature")
            }
        }
        guard let subject = payload["user_id"]?.stringValue ?? payload["user_id"]?.intValue.map(String.init),
            !subject.isEmpty, subject.utf8.count <= 64,
            subject.allSatisfy({ $0.isASCII && ($0.isNumber || $0.isLetter) })
        else { throw invalid("user_id") }
        guard let issuedAt = payload["issued_at"]?.intValue else { throw invalid("issued_at") }
        let age = now.timeIntervalSince1970 - TimeInterval(issuedAt)
        guard age <= configuration.facebook.signedRequestMaxAge else { throw expired("stale") }
        guard age >= -configuration.signIn.clockSkew else { throw expired("future") }
        let signature = signedRequest.split(separator: ".", maxSplits: 1).first.map(String.init) ?? ""
        let digest = SHA256.hash(data: Data(signature.trimmingCharacters(in: ["="]).utf8))
        return Verified(
            appID: appID, subject: subject, issuedAt: issuedAt,
            eventID: "facebook:" + Base64URL.encode(Data(digest)))
    }

    private static func invalid(_ reason: String) -> Refusal {
        Refusal(
            reason: reason,
            error: APIError(
                .badRequest, .signedRequestInvalid,
                "The signed_request is not signed by a Facebook app this server serves, is not HMAC-SHA256, or is malformed."
            ))
    }

    private static func expired(_ reason: String) -> Refusal {
        Refusal(
            reason: reason,
            error: APIError(
                .badRequest, .signedRequestExpired,
                "The signed_request's issued_at is older than LATCHKEY_SIGNED_REQUEST_MAX_AGE or in the future."))
    }
}

/// The answer Facebook expects from a data-deletion callback.
struct DataDeletionAnswer: Sendable, Equatable, Encodable {
    /// The public status page.
    let url: String
    /// The code Facebook shows the person.
    let confirmationCode: String

    enum CodingKeys: String, CodingKey {
        case url
        case confirmationCode = "confirmation_code"
    }
}
