import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

/// A person's second factors: enrolling an authenticator (TOTP), verifying it, listing and removing
/// factors, recovery codes, and step-up challenges. What a code sent to a challenge does is in
/// `SecondFactorService+Challenges.swift`; whether it passes is `Verdicts.factorAttempt`'s.
struct SecondFactorService: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore
    let tokens: SessionTokens
    let sealing: FactorSecretSealing
    /// Challenges issued and codes sent to them (`latchkey_second_factor_*`).
    var metrics: ServerMetrics?

    /// The most factors one person holds, pending ones included: more than anyone uses, and a
    /// bound on what a session can make the server store.
    static let maximumFactors = 10
    /// A pending factor not verified within this long is dropped when another is added.
    static let pendingLifetime: TimeInterval = 3600
    /// The longest display name kept.
    static let maximumDisplayNameLength = 64

    var settings: ServerConfiguration.SecondFactorSettings { configuration.secondFactor }

    // MARK: Enrolment

    /// `POST /v1/users/me/factors`: a new TOTP factor, pending until a code verifies it, for a
    /// session that proved itself recently (`requireFactorChange`): a stolen session must not add
    /// the thief's authenticator.
    func enroll(
        _ claims: SessionTokens.AccessClaims, _ request: FactorEnrollmentRequest
    ) async throws
        -> FactorEnrollmentBody
    {
        guard request.type == FactorType.totp.rawValue else {
            throw APIError.invalidRequest("type must be totp.")
        }
        let displayName = try Self.displayName(request.displayName)
        let factors = try await store.factors(userID: claims.userID)
        try await requireFactorChange(claims, factors: factors)
        guard let user = try await store.user(id: claims.userID) else { throw APIError.sessionEnded }
        let now = configuration.clock()
        let secret = TOTP.newSecret()
        let id = SessionTokens.randomToken(bytes: 12)
        let added = try await store.addFactor(
            NewFactor(
                id: id, userID: claims.userID, type: .totp, displayName: displayName,
                secret: try sealing.seal(secret, userID: claims.userID, factorID: id), createdAt: now),
            pendingSince: now.addingTimeInterval(-Self.pendingLifetime), limit: Self.maximumFactors, now: now)
        guard added else {
            throw APIError(
                .conflict, .tooManyFactors,
                "You have \(Self.maximumFactors) factors already: remove one (or let a pending one lapse) first.")
        }
        return FactorEnrollmentBody(
            id: id, type: FactorType.totp.rawValue, secret: Base32.encode(secret),
            uri: TOTP.uri(secret: secret, issuer: settings.totpIssuer, account: Self.accountLabel(user)))
    }

    /// `POST /v1/users/me/factors/{id}/verify`: activates a pending factor with a code it shows,
    /// for a session that proved itself recently (`requireFactorChange`); the person's first
    /// active factor comes with their recovery codes.
    func verify(
        _ claims: SessionTokens.AccessClaims, factorID: String, code: String
    ) async throws
        -> FactorVerificationBody
    {
        let notPending = APIError(.notFound, .factorNotFound, "No pending factor of yours has this id.")
        let factors = try await store.factors(userID: claims.userID)
        guard let factor = factors.first(where: { $0.id == factorID && !$0.active }) else { throw notPending }
        // A factor added by a session before the person's first one was active (a thief's, say) is
        // activated only by a session that proved that one.
        try await requireFactorChange(claims, factors: factors)
        let now = configuration.clock()
        guard let secret = sealing.open(factor.secret, userID: factor.userID, factorID: factor.id),
            let step = TOTP.matchingStep(code, secret: secret, at: now, skew: settings.skewSteps)
        else {
            let left = try await store.failFactorVerification(
                id: factorID, userID: claims.userID, limit: settings.maximumAttempts)
            throw left
                ? APIError(
                    .badRequest, .factorCodeInvalid,
                    "The code is wrong: check the authenticator's clock, then try the current code.")
                : APIError(.notFound, .factorNotFound, "Too many wrong codes: add the factor again.")
        }
        // Codes only for a first factor (the store decides again, in case another was activated
        // meanwhile): hashing them is the costly part of a verification.
        let codes = factors.contains(where: \.active) ? [] : RecoveryCodes.generate()
        let hashes = codes.compactMap { RecoveryCodes.hash($0, userID: claims.userID) }
        guard
            let issued = try await store.activateFactor(
                id: factorID, userID: claims.userID, step: step, recoveryCodes: hashes, now: now)
        else { throw notPending }
        var active = factor
        active.activatedAt = now
        return FactorVerificationBody(
            factor: Self.body(active), recoveryCodes: issued && !codes.isEmpty ? codes : nil)
    }

    // MARK: Listing and removing

    /// `GET /v1/users/me/factors`.
    func list(_ claims: SessionTokens.AccessClaims) async throws -> FactorsBody {
        let factors = try await store.factors(userID: claims.userID)
        return FactorsBody(
            factors: factors.map(Self.body),
            recoveryCodesLeft: factors.contains(where: \.active)
                ? try await store.recoveryCodesLeft(userID: claims.userID) : 0)
    }

    /// `DELETE /v1/users/me/factors/{id}`, for a session that proved itself recently
    /// (`requireFactorChange`): removing the owner's factor, or the pending one they are setting
    /// up, is a change of their way in too.
    func remove(_ claims: SessionTokens.AccessClaims, factorID: String) async throws {
        let notFound = APIError(.notFound, .factorNotFound, "No factor of yours has this id.")
        let factors = try await store.factors(userID: claims.userID)
        guard factors.contains(where: { $0.id == factorID }) else { throw notFound }
        try await requireFactorChange(claims, factors: factors)
        guard try await store.removeFactor(id: factorID, userID: claims.userID, now: configuration.clock()) else {
            throw notFound
        }
    }

    /// `POST /v1/users/me/recovery-codes`: ten new codes replace the old ones, for a session that
    /// proved the factor recently (`requireFactorChange`).
    func regenerateRecoveryCodes(_ claims: SessionTokens.AccessClaims) async throws -> RecoveryCodesBody {
        let factors = try await store.factors(userID: claims.userID)
        guard factors.contains(where: \.active) else { throw Self.notEnrolled }
        try await requireFactorChange(claims, factors: factors)
        let codes = RecoveryCodes.generate()
        guard
            try await store.replaceRecoveryCodes(
                userID: claims.userID, hashes: codes.compactMap { RecoveryCodes.hash($0, userID: claims.userID) },
                now: configuration.clock())
        else { throw Self.notEnrolled }
        return RecoveryCodesBody(recoveryCodes: codes)
    }

    /// The active factors of `source`, each sealed again for `target` (a merge moves them): a
    /// secret that does not open (a key-encryption key retired without a reseal) moves as it is,
    /// and matches no code there either, as it matched none before.
    func resealed(factorsOf source: String, for target: String) async throws -> [ResealedFactor] {
        try await store.factors(userID: source).filter(\.active).map { factor in
            let sealed = try sealing.open(factor.secret, userID: source, factorID: factor.id).map {
                try sealing.seal($0, userID: target, factorID: factor.id)
            }
            return ResealedFactor(id: factor.id, stored: factor.secret, sealed: sealed ?? factor.secret)
        }
    }

    static let notEnrolled = APIError(
        .conflict, .secondFactorNotEnrolled, "You have no active second factor: add and verify one first.")

    // MARK: Helpers

    /// The label an authenticator app shows under the issuer: the person's email when the account
    /// has one, else their name, else the user id.
    static func accountLabel(_ user: StoredUser) -> String {
        let label = [user.properties["email"], user.properties["name"]].lazy.compactMap { $0?.stringValue }
            .first { !$0.isEmpty && !$0.contains(":") }
        return String((label ?? user.id).prefix(128))
    }

    /// A display name as kept: trimmed, printable, bounded; `nil` when absent or blank.
    static func displayName(_ name: String?) throws -> String? {
        guard let name else { return nil }
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= maximumDisplayNameLength,
            trimmed.unicodeScalars.allSatisfy({ !CharacterSet.controlCharacters.contains($0) })
        else {
            throw APIError.invalidRequest(
                "displayName must be at most \(maximumDisplayNameLength) printable characters.")
        }
        return trimmed.isEmpty ? nil : trimmed
    }

    /// What the person's apps are shown of a factor (never its secret).
    static func body(_ factor: StoredFactor) -> FactorBody {
        FactorBody(
            id: factor.id, type: factor.type.rawValue, displayName: factor.displayName,
            status: factor.active ? "active" : "pending", createdAt: Int(factor.createdAt.timeIntervalSince1970),
            activatedAt: factor.activatedAt.map { Int($0.timeIntervalSince1970) },
            lastUsedAt: factor.lastUsedAt.map { Int($0.timeIntervalSince1970) })
    }

    /// A challenge names the active factors only.
    static func hint(_ factor: StoredFactor) -> FactorHintBody {
        FactorHintBody(id: factor.id, type: factor.type.rawValue, displayName: factor.displayName)
    }
}
