import Foundation
import LatchkeyAPI

/// A second factor: enrolling an authenticator app (TOTP), listing and removing factors, recovery
/// codes, and raising the session to `aal` 2 (step-up). Sign-ins of a person with a factor throw
/// ``LatchkeyError/Code/secondFactorRequired`` with a ``LatchkeyError/resolver``.
extension LatchkeyClient {
    /// Adds an authenticator app as a second factor for the signed-in user, pending until
    /// ``verifyEnrollment(factorID:code:)``: show ``TOTPEnrollment/uri`` as a QR code (or
    /// ``TOTPEnrollment/secret`` to type in), then ask for the code the app shows. Once the person
    /// has an active factor, adding another needs a session that proved one: the error is then
    /// ``LatchkeyError/Code/secondFactorRequired`` with a step-up ``LatchkeyError/resolver``.
    /// - Parameter displayName: the person's name for it ("Work phone"), at most 64 characters.
    public func enrollTOTP(displayName: String? = nil) async throws(LatchkeyError) -> TOTPEnrollment {
        var body: [String: JSONValue] = ["type": "totp"]
        if let displayName { body["displayName"] = .string(displayName) }
        let answer = try await authorized(
            "POST", "v1/users/me/factors", json: .object(body), as: FactorEnrollmentBody.self
        ).0
        return TOTPEnrollment(factorID: answer.id, secret: answer.secret, uri: answer.uri)
    }

    /// Activates a pending factor with a code its authenticator shows. On the person's first
    /// factor, answers ten recovery codes, each single use: show them once, for the person to keep
    /// somewhere safe (the server keeps only their hashes). Later factors answer none.
    /// - Throws: ``LatchkeyError/Code/factorCodeInvalid`` (check the phone's clock, try the current
    ///   code); ``LatchkeyError/Code/factorNotFound`` when too many wrong codes dropped it.
    @discardableResult
    public func verifyEnrollment(factorID: String, code: String) async throws(LatchkeyError) -> [String] {
        try await authorized(
            "POST", "v1/users/me/factors/\(Self.pathComponent(factorID))/verify", json: ["code": .string(code)],
            as: FactorVerificationBody.self
        ).0.recoveryCodes ?? []
    }

    /// The signed-in user's second factors (pending and active), and how many unused recovery
    /// codes they hold.
    public func secondFactors() async throws(LatchkeyError) -> FactorsBody {
        try await authorized("GET", "v1/users/me/factors", json: nil, as: FactorsBody.self).0
    }

    /// Removes a factor. An active one needs a session that proved a second factor
    /// (``LatchkeyError/Code/secondFactorRequired`` with a step-up resolver otherwise: resolve it,
    /// then call again). With the last factor go the recovery codes.
    public func removeSecondFactor(id: String) async throws(LatchkeyError) {
        _ = try await authorized(
            "DELETE", "v1/users/me/factors/\(Self.pathComponent(id))", json: nil, as: Data.self)
    }

    /// Ten new recovery codes, replacing the old ones; needs a session that proved a second factor.
    public func regenerateRecoveryCodes() async throws(LatchkeyError) -> [String] {
        try await authorized("POST", "v1/users/me/recovery-codes", json: [:], as: RecoveryCodesBody.self).0
            .recoveryCodes
    }

    /// A resolver whose code raises this session to `aal` 2 (new tokens for the same session), for
    /// what needs it: the app's own sensitive actions, when its backend requires `aal` 2 in the
    /// access token, or Latchkey's (removing a factor, new recovery codes).
    /// - Throws: ``LatchkeyError/Code/secondFactorNotEnrolled`` when the person has no factor.
    public func stepUp() async throws(LatchkeyError) -> MultiFactorResolver {
        let body = try await authorized(
            "POST", "v1/users/me/factors/challenge", json: [:], as: SecondFactorChallengeBody.self
        ).0
        return MultiFactorResolver(body, purpose: .stepUp, client: self, now: configuration.clock())
    }

    /// `POST /v1/auth/factor` for `resolver`: a sign-in opens its session as ``signIn(with:fieldsMapping:)``
    /// would (one more sign-in attempt); a step-up takes the new tokens of the same session.
    func resolveSecondFactor(
        _ resolver: MultiFactorResolver, _ response: FactorChallengeResponse
    ) async throws(LatchkeyError) -> SignInResult {
        var body: [String: JSONValue] = ["challenge": .string(response.challenge)]
        if let code = response.code { body["code"] = .string(code) }
        if let recoveryCode = response.recoveryCode { body["recoveryCode"] = .string(recoveryCode) }
        switch resolver.purpose {
        case .signIn:
            let attempt = beginSignIn()
            do {
                let answer = try await transport.send(
                    "POST", "v1/auth/factor", json: .object(body), as: SignInBody.self)
                let user = LatchkeyUser(answer.user)
                try await adoptSignIn(answer.session, user: user, attempt: attempt)
                log(.info, "Signed in with a second factor.")
                return SignInResult(
                    user: user, isNewUser: answer.isNewUser, grantedPermissions: answer.grantedPermissions,
                    declinedPermissions: answer.declinedPermissions, recoveryCodesLeft: answer.recoveryCodesLeft)
            } catch {
                throw failSignIn(attempt: attempt, error)
            }
        case .stepUp:
            let epoch = self.epoch
            guard credentials != nil else { throw LatchkeyError.notSignedIn }
            // The server replaces the session's refresh token: a refresh in flight lands first, and
            // the step-up then holds the store's exclusive access from its request to its save, as a
            // refresh does, so no refresh (here, or in another client over the store) presents the
            // token it replaces.
            if let inFlight = refreshTask { _ = try? await inFlight.value }
            await storeWritesSettled()
            let store = configuration.credentialStore
            let request = JSONValue.object(body)
            do {
                return try await store.withExclusiveAccess {
                    try await self.stepUpExclusively(request, epoch: epoch)
                }
            } catch let error as LatchkeyError {
                throw error
            } catch {
                throw LatchkeyError.sdk(
                    .credentialStoreFailed, "The credential store could not be locked for a step-up.", underlying: error
                )
            }
        }
    }

    /// The step-up's request and save, under the store's exclusive access.
    private func stepUpExclusively(_ body: JSONValue, epoch: UInt64) async throws(LatchkeyError) -> SignInResult {
        let session = try await transport.send("POST", "v1/auth/factor", json: body, as: SessionBody.self)
        guard epoch == self.epoch, let current = credentials else {
            // Signed out (or another session opened) meanwhile: the raised session is nobody's.
            revokeInBackground(session.accessToken)
            throw LatchkeyError.sessionEnded
        }
        let raised = credentials(from: session, user: current.user)
        credentials = raised
        publishSnapshot()
        await save(raised, to: configuration.credentialStore)
        log(.info, "The session proved a second factor.")
        return SignInResult(user: current.user, isNewUser: false)
    }
}

/// A TOTP factor just added (``LatchkeyClient/enrollTOTP(displayName:)``), pending its first code.
public struct TOTPEnrollment: Sendable, Equatable {
    /// The factor's id, for ``LatchkeyClient/verifyEnrollment(factorID:code:)``.
    public let factorID: String
    /// The shared secret in base32, for typing into an authenticator app. Shown this once.
    public let secret: String
    /// The `otpauth://totp/…` URI, for a QR code the authenticator app scans.
    public let uri: String

    /// Creates an enrolment (the client makes these; public so apps can test their screens).
    public init(factorID: String, secret: String, uri: String) {
        self.factorID = factorID
        self.secret = secret
        self.uri = uri
    }
}
