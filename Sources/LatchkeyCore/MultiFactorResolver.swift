import Foundation
import LatchkeyAPI

/// A second factor the person enrolled, as a challenge names it, to choose from and to name in a
/// prompt (Firebase's `MultiFactorInfo`).
public struct MultiFactorInfo: Sendable, Equatable, Identifiable {
    /// The factor's id (Firebase's `uid`).
    public let id: String
    /// The kind of factor: `totp` (Firebase's `factorID`).
    public let factorID: String
    /// The name the person gave it ("Work phone"), if any.
    public let displayName: String?

    /// Creates a factor's description.
    public init(id: String, factorID: String, displayName: String?) {
        self.id = id
        self.factorID = factorID
        self.displayName = displayName
    }

    /// Firebase's name for ``id``.
    public var uid: String { id }
}

/// What a sign-in of a person with a second factor hands the app, in Firebase's
/// `MultiFactorResolver` shape: the person's factors (``hints``) and ``resolve(code:)`` /
/// ``resolve(recoveryCode:)``, which finish the sign-in the error interrupted. Found on the
/// error: ``LatchkeyError/resolver``, when its code is ``LatchkeyError/Code/secondFactorRequired``.
///
/// ```swift
/// do {
///     try await client.signIn(with: credential)
/// } catch where error.code == .secondFactorRequired {
///     guard let resolver = error.resolver else { throw error }
///     let code = await askForCode(hints: resolver.hints)
///     try await resolver.resolve(code: code)
/// }
/// ```
///
/// The same resolver raises a signed-in session to a second factor (``purpose`` `.stepUp`): from
/// ``LatchkeyClient/stepUp()``, or on the error of a call that needs it (removing a factor, new
/// recovery codes).
///
/// A resolver is single use and lives ``expiresAt`` (five minutes by default). A wrong code
/// throws ``LatchkeyError/Code/factorCodeInvalid`` and the same resolver takes another, up to the
/// server's limit; after that, or once it expired, ``LatchkeyError/Code/factorChallengeInvalid``
/// says to start again.
public struct MultiFactorResolver: Sendable {
    /// What resolving finishes.
    public enum Purpose: Sendable, Equatable {
        /// A sign-in: resolving opens the session, as the sign-in would have.
        case signIn
        /// A step-up: resolving gives the signed-in session new tokens at `aal` 2.
        case stepUp
    }

    /// The person's factors (Firebase's `hints`).
    public let hints: [MultiFactorInfo]
    /// What resolving finishes.
    public let purpose: Purpose
    /// When the challenge stops being usable.
    public let expiresAt: Date
    /// The server's challenge.
    let challenge: String
    let client: LatchkeyClient

    init(_ body: SecondFactorChallengeBody, purpose: Purpose, client: LatchkeyClient, now: Date) {
        hints = body.factors.map { MultiFactorInfo(id: $0.id, factorID: $0.type, displayName: $0.displayName) }
        self.purpose = purpose
        expiresAt = now.addingTimeInterval(TimeInterval(body.expiresIn))
        challenge = body.challenge
        self.client = client
    }

    /// Finishes with the 6-digit code the person's authenticator app shows.
    /// - Returns: the sign-in's result (for a step-up, the signed-in user's).
    @discardableResult
    public func resolve(code: String) async throws(LatchkeyError) -> SignInResult {
        try await client.resolveSecondFactor(self, FactorChallengeResponse(challenge: challenge, code: code))
    }

    /// Finishes with one of the person's recovery codes (each works once; any case, spaces and
    /// dashes ignored). ``SignInResult/recoveryCodesLeft`` says how many remain: suggest new ones
    /// (``LatchkeyClient/regenerateRecoveryCodes()``) when few do.
    @discardableResult
    public func resolve(recoveryCode: String) async throws(LatchkeyError) -> SignInResult {
        try await client.resolveSecondFactor(
            self, FactorChallengeResponse(challenge: challenge, recoveryCode: recoveryCode))
    }
}

extension LatchkeyError {
    /// Firebase's name for the resolver of a `second_factor_required` error.
    public var multiFactorResolver: MultiFactorResolver? { resolver }
}
