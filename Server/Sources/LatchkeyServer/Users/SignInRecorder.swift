import Foundation

/// Records a verified sign-in in the store (`LatchkeyStore.signIn`), for every path that signs in
/// with a Facebook identity (classic, Limited Login, Easy Login), joining a new identity to the
/// user another app of the same business already made when `LATCHKEY_FACEBOOK_JOIN_BY_BUSINESS`
/// is on.
struct SignInRecorder: Sendable {
    let store: any LatchkeyStore
    let business: BusinessTokenLookup
    /// `ServerConfiguration.FacebookSettings.joinsByBusiness`.
    let joinsByBusiness: Bool

    /// Signs in with `login`: a returning identity at once; a new one, when joining by business,
    /// only after Facebook named the person's `token_for_business`.
    /// - Throws: `SignInConflict` and `IdentityRefusal` as the store refuses (nothing written).
    func record(
        _ login: LoginRecord, _ identity: FacebookIdentity, now: Date
    ) async throws -> (user: StoredUser, created: Bool) {
        var login = login
        login.joinsByBusiness = joinsByBusiness
        do {
            return try await store.signIn(login, now: now)
        } catch SignInConflict.newIdentity {
            return try await recordNewIdentity(login, identity, now: now)
        }
    }

    /// A new identity's sign-in when joining by business is on: the person's `token_for_business`
    /// names the user another app of the business made, and the identity is linked to that user
    /// (with the session or the Easy Login code, in one transaction); otherwise, or when that user
    /// went away meanwhile, a user of its own is made, the token stored so later apps find it.
    private func recordNewIdentity(
        _ login: LoginRecord, _ identity: FacebookIdentity, now: Date
    ) async throws -> (user: StoredUser, created: Bool) {
        var login = login
        login.joinsByBusiness = false
        login.businessToken = try await business.token(for: identity)
        if let token = login.businessToken, let owner = try await store.userID(businessToken: token) {
            var record = LinkRecord(
                userID: owner, identity: login.identity, mappedProperties: login.mappedProperties,
                singleUse: login.singleUse, session: login.session, businessToken: token,
                authorizationCode: login.authorizationCode)
            record.challenge = login.challenge
            do {
                switch try await store.linkIdentity(record, now: now) {
                case .linked(let user), .alreadyLinked(let user): return (user, false)
                case .conflict: break  // a concurrent sign-in made it first: sign in to its user
                }
            } catch IdentityRefusal.sessionEnded {
                // That user was deleted or merged meanwhile: a user of its own.
            }
        }
        return try await store.signIn(login, now: now)
    }
}
