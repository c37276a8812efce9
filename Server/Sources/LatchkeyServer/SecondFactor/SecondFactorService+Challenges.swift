import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto

/// What a challenge completes, once a code passed it.
enum FactorCompletion: Sendable {
    /// A sign-in's answer, as the sign-in would have given it.
    case signIn(SignInBody)
    /// A step-up's fresh tokens for the same session.
    case stepUp(SessionBody)
    /// Easy Login's code for the app, and where to send it.
    case easyLogin(code: String, plan: FactorChallengePlan)
}

extension SecondFactorService {
    /// A new challenge for `plan`: what the client is given (256 random bits) and what the store
    /// keeps (its hash).
    func challenge(
        _ plan: FactorChallengePlan, purpose: FactorChallengePurpose, sessionID: String? = nil, now: Date
    ) throws -> (token: String, record: NewFactorChallenge) {
        let token = RandomToken.base64URL(bytes: 32)
        return (
            token,
            NewFactorChallenge(
                hash: SessionTokens.hash(token), purpose: purpose, sessionID: sessionID, plan: try plan.encoded(),
                createdAt: now, expiresAt: now.addingTimeInterval(settings.challengeLifetime))
        )
    }

    /// The `401 second_factor_required` of a held sign-in, carrying `token` and naming the user's
    /// active factors.
    func required(userID: String, token: String) async throws -> APIError {
        metrics?.factorChallenge(purpose: FactorChallengePurpose.signIn.rawValue)
        return required(
            SecondFactorChallengeBody(
                challenge: token, expiresIn: Int(settings.challengeLifetime),
                factors: try await store.factors(userID: userID).filter(\.active).map(Self.hint)),
            status: .unauthorized)
    }

    /// The `second_factor_required` error carrying `challenge`: 401 for a sign-in, 403 for an
    /// operation that needs `aal` 2.
    func required(_ challenge: SecondFactorChallengeBody, status: HTTPResponse.Status) -> APIError {
        var error = APIError(
            status, .secondFactorRequired,
            status == .unauthorized
                ? "Enter a code from your authenticator app (or a recovery code) to finish signing in: send it with challenge to POST /v1/auth/factor."
                : "This needs a session that proved a second factor: send a code with challenge to POST /v1/auth/factor, then retry with the new access token."
        )
        error.challenge = challenge
        return error
    }

    /// Passes when the session may change the person's second factors (`Verdicts.factorChange`:
    /// a recent proof, and with an active factor one that includes it); otherwise throws
    /// `403 reauthentication_required`, or `403 second_factor_required` with a step-up challenge.
    /// - Parameter factors: the user's factors, as the caller just read them (named in the challenge).
    /// - Parameter guestsExempt: a guest passes (a link's ticket) instead of being refused.
    func requireFactorChange(
        _ claims: SessionTokens.AccessClaims, factors: [StoredFactor], guestsExempt: Bool = false
    ) async throws {
        let now = configuration.clock()
        guard let proof = try await store.sessionProof(id: claims.sessionID, now: now) else {
            throw APIError.sessionEnded
        }
        if guestsExempt && proof.anonymous && proof.active { return }
        let facts = FactorChangeFacts(
            sessionActive: proof.active && proof.userID == claims.userID, anonymous: proof.anonymous,
            activeFactor: factors.contains(where: \.active),
            secondsSinceProof: now.timeIntervalSince(proof.latestProof),
            secondsSinceFactorProof: proof.factorProvenAt.map { now.timeIntervalSince($0) },
            window: configuration.identities.reauthenticationWindow)
        switch Verdicts.factorChange(facts) {
        case .allow: return
        case .sessionEnded: throw APIError.sessionEnded
        case .reauthenticate where facts.anonymous:
            throw APIError(
                .forbidden, .reauthenticationRequired,
                "A guest has no way to sign in that a second factor could guard: link a sign-in method first.")
        case .reauthenticate: throw APIError(IdentityRefusal.reauthenticationRequired, action: .secondFactor)
        case .stepUp: throw required(try await stepUp(claims, factors: factors), status: .forbidden)
        }
    }

    /// Passes unless the caller has an active factor that its session has not proven recently
    /// (`Verdicts.factorChange`). A conflict's link ticket can merge the caller's account into
    /// another, whose factors then guard the caller's identities instead of its own: issuing one
    /// is a change of the caller's second factor, and a thief of an aal-1 session must not get it.
    /// A guest is exempt, as from every reauthentication of a link: it has no identity to lose.
    func requireFactorsForTicket(_ claims: SessionTokens.AccessClaims) async throws {
        let factors = try await store.factors(userID: claims.userID)
        guard factors.contains(where: \.active) else { return }
        try await requireFactorChange(claims, factors: factors, guestsExempt: true)
    }

    /// `POST /v1/users/me/factors/challenge`: a challenge whose code raises the caller's session to
    /// `aal` 2.
    /// - Parameter factors: the user's factors when the caller has them already; read otherwise.
    func stepUp(
        _ claims: SessionTokens.AccessClaims, factors known: [StoredFactor]? = nil
    ) async throws -> SecondFactorChallengeBody {
        let now = configuration.clock()
        let (token, record) = try challenge(
            FactorChallengePlan(kind: .stepUp), purpose: .stepUp, sessionID: claims.sessionID, now: now)
        guard try await store.createFactorChallenge(record, userID: claims.userID) else {
            guard try await store.isSessionActive(id: claims.sessionID) else { throw APIError.sessionEnded }
            throw Self.notEnrolled
        }
        metrics?.factorChallenge(purpose: FactorChallengePurpose.stepUp.rawValue)
        let factors: [StoredFactor]
        if let known { factors = known } else { factors = try await store.factors(userID: claims.userID) }
        return SecondFactorChallengeBody(
            challenge: token, expiresIn: Int(settings.challengeLifetime),
            factors: factors.filter(\.active).map(Self.hint))
    }

    /// Sends a code to a challenge (`POST /v1/auth/factor`, or Easy Login's code page when
    /// `easyLogin`): what it completes when the code passes.
    /// - Throws: `APIError`: `factor_code_invalid` (wrong, counted), `factor_challenge_invalid`,
    ///   `rate_limited` (the user's attempts wait), `session_revoked` / `user_disabled`.
    func complete(
        _ response: FactorChallengeResponse, client: ClientInfo, easyLogin: Bool = false
    ) async throws -> FactorCompletion {
        let invalid = APIError(
            .badRequest, .factorChallengeInvalid,
            "This challenge is unknown, expired, used or out of attempts: sign in again.")
        guard (response.code == nil) != (response.recoveryCode == nil) else {
            throw APIError.invalidRequest("Send exactly one of code or recoveryCode.")
        }
        let hash = SessionTokens.hash(response.challenge)
        guard let stored = try await store.factorChallenge(hash: hash),
            let plan = FactorChallengePlan.decode(stored.plan), (plan.kind == .easyLogin) == easyLogin
        else { throw invalid }
        let now = configuration.clock()
        let proof = try await proof(response, userID: stored.userID, now: now)
        let by: SecondFactorKind = response.recoveryCode == nil ? .totp : .recoveryCode
        let (action, finish) = try prepare(plan, sessionID: stored.sessionID, by: by, client: client, now: now)
        let outcome = try await store.attemptFactorChallenge(
            hash: hash, proof: proof, action: action, maximumAttempts: settings.maximumAttempts, now: now)
        metrics?.factorAttempt(purpose: stored.purpose.rawValue, outcome: outcome.metricName)
        switch outcome {
        case .passed(let userID, let by, let left, let method):
            return try await finish(userID, by, left, method)
        case .wrong(let attemptsLeft):
            throw APIError(
                .badRequest, .factorCodeInvalid,
                attemptsLeft > 0
                    ? "The code is wrong or was used already; \(attemptsLeft) more attempt(s) on this challenge."
                    : "The code is wrong or was used already, and this challenge is out of attempts: sign in again.")
        case .challengeInvalid:
            throw invalid
        case .locked(let until):
            throw APIError(
                .tooManyRequests, .rateLimited, "Too many wrong codes: wait before trying again.",
                retryAfter: max(1, Int(until.timeIntervalSince(now).rounded(.up))))
        case .ended:
            throw stored.purpose == .stepUp ? APIError.sessionEnded : APIError.userDisabled
        }
    }

    /// What the code is, as the store can check it: the user's active TOTP factor whose code it is
    /// within the allowed skew (every factor is tried, each in constant time), or a recovery code's
    /// hash. A secret that does not open matches nothing.
    private func proof(_ response: FactorChallengeResponse, userID: String, now: Date) async throws -> FactorProof {
        if let typed = response.recoveryCode {
            // Codes kept through a merge were hashed for the merged account's id: one hash per
            // salt (nearly always just the user's own), each a few milliseconds.
            guard RecoveryCodes.normalize(typed) != nil else { return .none }
            let salts = try await store.recoveryCodeSalts(userID: userID)
            let hashes = (salts.isEmpty ? [userID] : salts).compactMap { RecoveryCodes.hash(typed, userID: $0) }
            return .recoveryCode(hashes: hashes)
        }
        guard let code = response.code?.replacingOccurrences(of: " ", with: "") else { return .none }
        var found = FactorProof.none
        for factor in try await store.factors(userID: userID) where factor.active && factor.type == .totp {
            guard let secret = sealing.open(factor.secret, userID: userID, factorID: factor.id),
                let step = TOTP.matchingStep(code, secret: secret, at: now, skew: settings.skewSteps)
            else { continue }
            if case .none = found { found = .totp(factorID: factor.id, step: step) }
        }
        return found
    }

    /// What passing does in the store (`action`), and how the answer is made afterwards.
    private func prepare(
        _ plan: FactorChallengePlan, sessionID: String?, by: SecondFactorKind, client: ClientInfo, now: Date
    ) throws -> (
        action: FactorChallengeAction,
        finish: @Sendable (String, SecondFactorKind, Int?, SessionMethod?) async throws -> FactorCompletion
    ) {
        let tokens = tokens
        let store = store
        switch plan.kind {
        case .signIn:
            var opening = tokens.opening(at: now, method: plan.method ?? .classic, client: client)
            opening.record.secondFactor = by
            let record = opening.record
            let refreshToken = opening.refreshToken
            return (
                .openSession(record, identity: plan.identity),
                { userID, by, left, _ in
                    guard let user = try await store.user(id: userID) else { throw APIError.sessionEnded }
                    return .signIn(
                        SignInBody(
                            user: UserBody(user), isNewUser: plan.created ?? false,
                            grantedPermissions: plan.granted ?? [], declinedPermissions: plan.declined ?? [],
                            session: try tokens.body(
                                userID: userID, sessionID: record.id, refreshToken: refreshToken,
                                anonymous: user.anonymous,
                                assurance: SessionAssurance(method: record.method, secondFactor: by), now: now),
                            recoveryCodesLeft: left))
                }
            )
        case .stepUp:
            guard let sessionID else { throw APIError.sessionEnded }
            let refresh = SessionTokens.newRefreshToken()
            return (
                .raiseSession(
                    refreshTokenHash: refresh.hash,
                    refreshExpiresAt: now.addingTimeInterval(configuration.sessions.refreshTokenLifetime)),
                { userID, by, _, method in
                    guard let user = try await store.user(id: userID) else { throw APIError.sessionEnded }
                    return .stepUp(
                        try tokens.body(
                            userID: userID, sessionID: sessionID, refreshToken: refresh.token,
                            anonymous: user.anonymous, assurance: SessionAssurance(method: method, secondFactor: by),
                            now: now))
                }
            )
        case .easyLogin:
            guard let identity = plan.identity, let clientID = plan.clientID, let redirectURI = plan.redirectURI,
                let codeChallenge = plan.codeChallenge
            else { throw APIError.invalidRequest("This challenge cannot be completed here.") }
            let code = SessionTokens.randomToken(bytes: 32)
            return (
                .storeCode(
                    NewAuthorizationCode(
                        hash: SessionTokens.hash(code), clientID: clientID, redirectURI: redirectURI,
                        codeChallenge: codeChallenge, sessionID: SessionTokens.randomToken(bytes: 16),
                        scope: plan.granted ?? [],
                        expiresAt: now.addingTimeInterval(configuration.easyLogin.authorizationCodeLifetime),
                        secondFactor: by),
                    identity: identity),
                { _, _, _, _ in .easyLogin(code: code, plan: plan) }
            )
        }
    }
}
