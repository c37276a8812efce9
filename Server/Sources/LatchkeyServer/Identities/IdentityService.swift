import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import Logging

/// Guests, linking and unlinking identities, completing a conflict by merging, and deleting an
/// account. What each does is decided in `Verdicts` (`IdentityVerdicts.swift`) on the facts a
/// store reads; this service verifies credentials, issues and opens tickets, and turns refusals
/// into typed errors.
struct IdentityService: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore
    let signIn: SignInService
    let tokens: SessionTokens
    let limits: AbuseLimits
    /// Holds a guest's upgrade back when the guest has a second factor.
    var secondFactor: SecondFactorService { signIn.secondFactor }

    /// The fields `POST /v1/users/me/identities/complete` accepts.
    static let completionFields = LinkCompletionRequest.CodingKeys.fieldNames

    // MARK: Guests

    /// `POST /v1/auth/anonymous`: a guest with no identity and a session for it.
    func createGuest(client: ClientInfo, logger: Logger) async throws -> SignInBody {
        guard configuration.identities.anonymousUsers else {
            throw APIError(
                .notFound, .notFound, "Guest accounts are not enabled on this server (LATCHKEY_ANONYMOUS_USERS).")
        }
        let now = configuration.clock()
        let opening = tokens.opening(at: now, method: .guest, client: client)
        let user = try await store.createGuest(
            id: SessionTokens.randomToken(bytes: 15), session: opening.record, now: now)
        logger.info("latchkey.guest.created", metadata: ["latchkey.user.id": "\(user.id)"])
        return SignInBody(
            user: UserBody(user), isNewUser: true, grantedPermissions: [], declinedPermissions: [],
            session: try tokens.body(
                userID: user.id, sessionID: opening.id, refreshToken: opening.refreshToken, anonymous: true,
                assurance: opening.assurance, now: now))
    }

    // MARK: Linking

    /// `POST /v1/users/me/identities`: links the identity `prove` proves (the sign-in's own
    /// verification of a Facebook or Apple credential) to the caller's account.
    func link(
        _ claims: SessionTokens.AccessClaims, prove: () async throws -> ProvenIdentity
    ) async throws -> StoredUser {
        let proven = try await prove()
        let now = configuration.clock()
        let record = LinkRecord(
            userID: claims.userID, identity: proven.identity, mappedProperties: proven.mappedProperties,
            singleUse: proven.singleUse, provingSessionID: claims.sessionID,
            reauthenticationWindow: configuration.identities.reauthenticationWindow, businessToken: proven.businessToken
        )
        switch try await link(record, limitKey: proven.limitKey, now: now) {
        case .linked(let user), .alreadyLinked(let user): return user
        case .conflict(let owner, let through):
            try await secondFactor.requireFactorsForTicket(claims)
            throw try conflict(record, owner: owner, through: through, now: now)
        }
    }

    /// Proves a Facebook credential for a link or an upgrade.
    /// When joining by business is on, the person's `token_for_business` comes along: a link of
    /// an app's identity to one account while the same person's identity in another app of the
    /// business is another's would split the person, and is answered as the conflict it is.
    func facebook(_ request: FacebookExchangeRequest, client: ClientAddress?) async throws -> ProvenIdentity {
        let (identity, mapping) = try await signIn.verify(request, client: client)
        var proven = identity.proven(mapping: mapping, at: configuration.clock())
        if signIn.recorder.joinsByBusiness {
            proven.businessToken = try await signIn.recorder.business.token(for: identity)
        }
        return proven
    }

    /// `POST /v1/users/me/identities/link-requests`: a handle for `/v1/oauth/authorize`'s
    /// `link_request`, so Easy Login links to the caller instead of signing in, with no bearer in a
    /// URL. Sealed (`SealedToken`), bound to the caller's session, spent once at the callback, and
    /// valid as long as a person may take on Facebook's dialog.
    ///
    /// It is bound to the PKCE `codeChallenge` of the app's Easy Login request: `authorize` accepts
    /// it only with that challenge, and nothing is linked until the code is redeemed with the
    /// verifier. A handle that leaks (a proxy's log of the authorize URL) or one an attacker sends a
    /// victim (linking CSRF) links nothing without the verifier, which never leaves the app.
    func linkRequest(_ claims: SessionTokens.AccessClaims, codeChallenge: String) throws -> LinkRequestBody {
        guard PKCE.isValidS256Challenge(codeChallenge) else {
            throw APIError.invalidRequest("codeChallenge must be the S256 code_challenge of the Easy Login request.")
        }
        let lifetime = configuration.easyLogin.requestLifetime
        let expires = Int(configuration.clock().addingTimeInterval(lifetime).timeIntervalSince1970)
        let handle = try SealedToken.seal(
            [
                "u": .string(claims.userID), "s": .string(claims.sessionID), "c": .string(codeChallenge),
                "e": .int(expires), "n": .string(RandomToken.base64URL(bytes: 12)),
                // The second factor the session proved: the session the link opens keeps it.
                "f": claims.secondFactor.map { .string($0.rawValue) } ?? .null,
            ], kind: .linkRequest, key: tokens.keys.current.signing)
        return LinkRequestBody(linkRequest: handle, expiresIn: Int(lifetime))
    }

    /// `POST /v1/auth/facebook` or `/v1/auth/apple` with a guest's bearer: the identity `prove`
    /// proves is linked to the guest, which keeps its id and properties and becomes a full user,
    /// and a session opens as for a sign-in.
    func upgradeGuest(
        _ claims: SessionTokens.AccessClaims, client: ClientInfo, logger: Logger,
        prove: () async throws -> ProvenIdentity
    ) async throws -> SignInBody {
        guard try await store.isSessionActive(id: claims.sessionID) else { throw APIError.sessionEnded }
        let proven = try await prove()
        let now = configuration.clock()
        var opening = tokens.opening(at: now, method: proven.method, client: client)
        opening.record.secondFactor = claims.secondFactor
        var record = LinkRecord(
            userID: claims.userID, identity: proven.identity, mappedProperties: proven.mappedProperties,
            singleUse: proven.singleUse,
            // The token said guest when it was issued; if the user became a full one since, the
            // link is held to the reauthentication window like any other.
            provingSessionID: claims.sessionID,
            reauthenticationWindow: configuration.identities.reauthenticationWindow,
            session: opening.record, businessToken: proven.businessToken)
        // A guest who added a second factor: the new session waits for it, as a sign-in would.
        record.provenSecondFactor = claims.secondFactor
        let (challenge, held) = try secondFactor.challenge(.signIn(proven), purpose: .signIn, now: now)
        record.challenge = held
        let user: StoredUser
        do {
            switch try await link(record, limitKey: proven.limitKey, now: now) {
            case .linked(let linked), .alreadyLinked(let linked): user = linked
            case .conflict(let owner, let through):
                try await secondFactor.requireFactorsForTicket(claims)
                throw try conflict(record, owner: owner, through: through, now: now)
            }
        } catch let required as SecondFactorRequired {
            throw try await secondFactor.required(userID: required.userID, token: challenge)
        }
        logger.info("latchkey.guest.upgraded", metadata: ["latchkey.user.id": "\(user.id)"])
        return SignInBody(
            user: UserBody(user), isNewUser: false, grantedPermissions: proven.granted,
            declinedPermissions: proven.declined,
            session: try tokens.body(
                userID: user.id, sessionID: opening.id, refreshToken: opening.refreshToken,
                assurance: opening.assurance, now: now))
    }

    /// Runs a link, giving the per-identity count back when it was refused.
    private func link(_ record: LinkRecord, limitKey: String, now: Date) async throws -> LinkOutcome {
        do {
            return try await store.linkIdentity(record, now: now)
        } catch let refusal as IdentityRefusal {
            await limits.refund(limits.rules.signInPerIdentity, key: limitKey)
            throw APIError(refusal, action: .link)
        }
    }

    /// The `409 identity_already_linked` of a link whose identity another user owns, with a ticket
    /// bound to the caller's account and the identity just proven. It names neither the other
    /// account nor anything of it.
    private func conflict(_ record: LinkRecord, owner: String, through: IdentityName?, now: Date) throws -> APIError {
        try Self.conflict(
            record, owner: owner, through: through, now: now, configuration: configuration, tokens: tokens)
    }

    /// The conflict of `record` (see `conflict(_:now:)`), for Easy Login's link too.
    /// The ticket names (sealed) the account that owned the identity, and completes for it alone.
    /// - Parameter through: the owner's identity the conflict was found by, when not the one linked
    ///   (a business sibling): the one a merge checks the owner still has.
    static func conflict(
        _ record: LinkRecord, owner: String, through: IdentityName? = nil, now: Date,
        configuration: ServerConfiguration, tokens: SessionTokens
    ) throws -> APIError {
        let expires = Int(now.addingTimeInterval(configuration.identities.linkTicketLifetime).timeIntervalSince1970)
        let named = through ?? IdentityName(provider: record.identity.provider, subject: record.identity.subject)
        let ticket = try SealedToken.seal(
            [
                "u": .string(record.userID), "p": .string(named.provider),
                "s": .string(named.subject), "o": .string(owner), "e": .int(expires),
                "n": .string(RandomToken.base64URL(bytes: 12)),
            ], kind: .linkTicket, key: tokens.keys.current.signing)
        var error = APIError(
            .conflict, .identityAlreadyLinked,
            "This identity belongs to another account. Sign in with it, then send linkTicket to POST /v1/users/me/identities/complete to merge the two accounts."
        )
        error.linkTicket = ticket
        return error
    }

    /// `POST /v1/users/me/identities/complete`: merges the ticket's account into the caller's.
    func complete(
        _ claims: SessionTokens.AccessClaims, _ request: LinkCompletionRequest
    ) async throws -> LinkCompletionBody {
        let now = configuration.clock()
        let invalid = APIError(IdentityRefusal.ticketInvalid, action: .merge)
        guard
            let opened = SealedToken.open(request.linkTicket, kind: .linkTicket, keys: tokens.keys.current.requestKeys),
            let source = opened.payload["u"]?.stringValue, let provider = opened.payload["p"]?.stringValue,
            let subject = opened.payload["s"]?.stringValue, let expires = opened.payload["e"]?.intValue,
            // Issued while another account owned the identity: only that account completes it.
            opened.payload["o"]?.stringValue == claims.userID
        else { throw invalid }
        guard TimeInterval(expires) > now.timeIntervalSince1970 else {
            throw APIError(.badRequest, .linkTicketInvalid, "This link ticket has expired; link again for a new one.")
        }
        var record = MergeRecord(
            sourceUserID: source, targetUserID: claims.userID, provider: provider, subject: subject,
            ticketID: opened.useKey, ticketExpiresAt: Date(timeIntervalSince1970: TimeInterval(expires)),
            targetSessionID: claims.sessionID, reauthenticationWindow: configuration.identities.reauthenticationWindow)
        // The merged account's factors may move to the caller's (`Verdicts.mergeFactors`): sealed
        // for it here, where the key-encryption keys are; the store moves them only if they are
        // still what was read, else they are read and sealed again.
        for _ in 0..<3 {
            record.resealedFactors = try await secondFactor.resealed(factorsOf: source, for: claims.userID)
            do {
                let user = try await store.merge(record, now: now)
                return LinkCompletionBody(user: UserBody(user), mergedUserID: source)
            } catch let refusal as IdentityRefusal {
                throw APIError(refusal, action: .merge)
            } catch MergeFactorRefusal.stepUp {
                throw secondFactor.required(try await secondFactor.stepUp(claims), status: .forbidden)
            } catch MergeFactorRefusal.stale {
                continue
            }
        }
        throw APIError(.serviceUnavailable, .unavailable, "The accounts kept changing; try again.", retryAfter: 1)
    }

    /// `DELETE /v1/users/me/identities/{provider}/{subject}`.
    func unlink(_ claims: SessionTokens.AccessClaims, provider: String, subject: String) async throws -> StoredUser {
        do {
            return try await store.unlinkIdentity(
                userID: claims.userID, sessionID: claims.sessionID, provider: provider, subject: subject,
                now: configuration.clock(), reauthenticationWindow: configuration.identities.reauthenticationWindow)
        } catch let refusal as IdentityRefusal {
            throw APIError(refusal, action: .unlink)
        }
    }

    // MARK: Deleting

    /// `DELETE /v1/users/me`: deletes the caller's account, when its session signed in recently.
    func deleteAccount(_ claims: SessionTokens.AccessClaims, logger: Logger) async throws {
        do {
            try await store.deleteUser(
                id: claims.userID, sessionID: claims.sessionID, now: configuration.clock(),
                reauthenticationWindow: configuration.identities.reauthenticationWindow)
        } catch let refusal as IdentityRefusal {
            throw APIError(refusal, action: .deleteAccount)
        }
        logger.info("latchkey.user.deleted", metadata: ["latchkey.user.id": "\(claims.userID)"])
    }
}

extension APIError {
    /// The typed error of a refused sign-in (`Verdicts.signIn`).
    init(_ conflict: SignInConflict) {
        switch conflict {
        case .replayed: self = .idTokenReplayed
        case .userDisabled: self = .userDisabled
        case .nonceInvalid: self = .nonceInvalid
        // Asked for only by a sign-in that then looks its business up; it reaches no client
        // unless a concurrent change made the second pass meet it again.
        case .newIdentity:
            self.init(.serviceUnavailable, .unavailable, "The sign-in raced another; try again.", retryAfter: 1)
        }
    }

    static let idTokenReplayed = APIError(.unauthorized, .idTokenReplayed, "This id token was already used.")
    static let userDisabled = APIError(.forbidden, .userDisabled, "This account is disabled.")

    /// The typed error of a refused identity operation.
    /// - Parameter action: what was refused, named in `reauthentication_required`'s message.
    init(_ refusal: IdentityRefusal, action: ChangeOfWayIn) {
        switch refusal {
        case .replayed: self = .idTokenReplayed
        case .nonceInvalid: self = .nonceInvalid
        case .userDisabled: self = .userDisabled
        case .sessionEnded: self = .sessionEnded
        case .notLinked: self.init(.notFound, .notFound, "This identity is not linked to the account.")
        case .lastSignInMethod:
            self.init(
                .conflict, .lastSignInMethod,
                "This is the account's last way to sign in; link another before removing it.")
        case .ticketInvalid:
            self.init(
                .badRequest, .linkTicketInvalid,
                "This link ticket is not valid for this account: it was used, altered, or the accounts changed.")
        case .reauthenticationRequired:
            self.init(
                .forbidden, .reauthenticationRequired,
                "\(action.rawValue) needs a recent sign-in: sign in again, then retry with the new session.")
        }
    }
}
