import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import Logging
import NIOCore

/// `POST /v1/auth/facebook`: verifies a Facebook credential, finds or creates the user, opens a session.
struct SignInService: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore
    let classic: AccessTokenVerifier
    let limited: LimitedLoginVerifier
    let tokens: SessionTokens
    let limits: AbuseLimits
    /// Records sign-ins, joining a new identity to its business's user (`LATCHKEY_FACEBOOK_JOIN_BY_BUSINESS`).
    let recorder: SignInRecorder
    /// Holds a sign-in back for the second factor of a user who has one.
    let secondFactor: SecondFactorService
    /// Sign-ins by provider, method and outcome (`latchkey_sign_ins_total`).
    var metrics: ServerMetrics?

    /// The fields `POST /v1/auth/facebook` accepts: the wire type's, which the SDK writes.
    static let requestFields = FacebookExchangeRequest.CodingKeys.fieldNames

    /// Reads `POST /v1/auth/facebook`'s fields as the wire type, each bounded.
    static func request(_ fields: [String: JSONValue]) throws -> FacebookExchangeRequest {
        typealias Key = FacebookExchangeRequest.CodingKeys
        return FacebookExchangeRequest(
            accessToken: try RequestReading.string(fields, Key.accessToken.stringValue),
            idToken: try RequestReading.string(fields, Key.idToken.stringValue, maxLength: CompactJWS.maximumLength),
            nonce: try RequestReading.string(fields, Key.nonce.stringValue, maxLength: 512),
            fieldsMapping: try RequestReading.stringMap(fields, Key.fieldsMapping.stringValue))
    }

    /// - Parameter client: the caller's address, for the tighter limits on classic sign-ins while
    ///   the app's Graph usage is high.
    /// - Parameter info: the caller as the session records it.
    func signIn(
        _ request: FacebookExchangeRequest, client: ClientAddress?, info: ClientInfo, logger: Logger
    ) async throws -> SignInBody {
        let (identity, mapping) = try await verify(request, client: client)
        return try await open(
            identity.proven(mapping: mapping, at: configuration.clock()), client: info, logger: logger
        ) { login, now in
            try await recorder.record(login, identity, now: now)
        }
    }

    /// Signs `proven` in, whichever provider proved it: `record` writes the sign-in with a new
    /// session (Facebook's through `SignInRecorder`, which may join a business's user), and the
    /// answer carries the session. A refusal gives the per-identity count back. For a user with an
    /// active second factor the store keeps a challenge instead of the session, and the answer is
    /// `401 second_factor_required` with it (`POST /v1/auth/factor` then opens the session).
    /// - Parameter client: the caller, as the session records it.
    func open(
        _ proven: ProvenIdentity, client: ClientInfo, logger: Logger,
        record: (LoginRecord, Date) async throws -> (user: StoredUser, created: Bool)
    ) async throws -> SignInBody {
        let now = configuration.clock()
        let opening = tokens.opening(at: now, method: proven.method, client: client)
        var login = LoginRecord(proven, configuration: configuration, session: opening.record)
        let (challenge, held) = try secondFactor.challenge(.signIn(proven), purpose: .signIn, now: now)
        login.challenge = held
        let user: StoredUser
        let created: Bool
        do {
            (user, created) = try await record(login, now)
            count(login, created ? "created" : "returning")
        } catch let required as SecondFactorRequired {
            count(login, "second_factor")
            logger.info(
                "latchkey.signin.second_factor_required",
                metadata: [
                    "latchkey.user.id": "\(required.userID)", "latchkey.signin.kind": "\(proven.method.rawValue)",
                ])
            throw try await secondFactor.required(userID: required.userID, token: challenge)
        } catch let conflict as SignInConflict {
            count(login, "refused")
            // Not a sign-in of this person after all: the count goes back.
            await limits.refund(limits.rules.signInPerIdentity, key: proven.limitKey)
            throw APIError(conflict)
        } catch let refusal as IdentityRefusal {
            count(login, "refused")
            await limits.refund(limits.rules.signInPerIdentity, key: proven.limitKey)
            throw APIError(refusal, action: .link)
        }
        logger.info(
            "latchkey.signin",
            metadata: [
                "latchkey.user.id": "\(user.id)", "latchkey.signin.kind": "\(proven.method.rawValue)",
                "latchkey.signin.created": .stringConvertible(created),
            ])
        return SignInBody(
            user: UserBody(user), isNewUser: created, grantedPermissions: proven.granted,
            declinedPermissions: proven.declined,
            session: try tokens.body(
                userID: user.id, sessionID: opening.id, refreshToken: opening.refreshToken,
                assurance: opening.assurance, now: now))
    }

    /// Counts a sign-in the store answered: `outcome` is `created`, `returning`, `second_factor`
    /// or `refused`.
    func count(_ login: LoginRecord, _ outcome: String) {
        metrics?.signIn(
            provider: login.identity.provider, method: login.session?.method.rawValue ?? "code", outcome: outcome)
    }

    /// Verifies the Facebook credential of a sign-in or a link (the same shapes, the same checks)
    /// and counts it against the per-identity limit: the person proven, and the field mapping
    /// that applies to their profile.
    func verify(
        _ request: FacebookExchangeRequest, client: ClientAddress?
    ) async throws -> (identity: FacebookIdentity, mapping: FieldMapping) {
        let (accessToken, idToken, nonce) = (request.accessToken, request.idToken, request.nonce)
        let mapping =
            try request.fieldsMapping.map {
                try FieldMapping(request: $0, allowed: configuration.users.clientMappableProperties)
            } ?? FieldMapping(trusted: configuration.users.defaultFieldsMapping)

        guard accessToken?.isEmpty != true, idToken?.isEmpty != true else {
            throw APIError.invalidRequest("accessToken and idToken must not be empty.")
        }
        let identity: FacebookIdentity
        switch (accessToken, idToken) {
        case (let token?, nil):
            try await limits.enforceClassicSignIn(client)
            identity = try await classic.verify(token, mapping: mapping)
        case (nil, let token?): identity = try await limited.verify(token, nonce: nonce)
        default: throw APIError.invalidRequest("Send exactly one of accessToken or idToken.")
        }

        try await limits.enforce(limits.rules.signInPerIdentity, key: identity.limitKey)
        return (identity, mapping)
    }
}

extension SignInService {
    /// A server nonce for Limited Login (`POST /v1/auth/nonce`), stored until it expires or a
    /// sign-in spends it.
    func issueNonce() async throws -> NonceBody {
        let nonce = SessionTokens.randomToken(bytes: 24)
        let lifetime = configuration.signIn.nonceLifetime
        let now = configuration.clock()
        try await store.storeNonce(nonce, expiresAt: now.addingTimeInterval(lifetime), now: now)
        return NonceBody(nonce: nonce, expiresIn: Int(lifetime))
    }
}

extension UserBody {
    init(_ user: StoredUser) {
        self.init(
            id: user.id, properties: user.properties,
            identities: user.identities.map {
                IdentityBody(
                    provider: $0.provider, subject: $0.subject, appID: $0.appID,
                    grantedPermissions: $0.grantedPermissions, firstSignInAt: Int($0.firstSeen.timeIntervalSince1970),
                    lastSignInAt: Int($0.lastSeen.timeIntervalSince1970))
            },
            createdAt: Int(user.createdAt.timeIntervalSince1970), isAnonymous: user.anonymous)
    }
}
