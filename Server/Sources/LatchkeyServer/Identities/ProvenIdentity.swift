import Foundation
import LatchkeyAPI

/// A person a provider credential proved, ready for a sign-in, a link or a guest's upgrade: one
/// shape for Facebook and Apple, so the identity rules never ask which provider it was.
struct ProvenIdentity: Sendable {
    /// The identity as stored (provider, subject, app, permissions; seen now).
    var identity: StoredIdentity
    /// The properties the provider's profile maps to.
    var mappedProperties: [String: JSONValue]
    /// What the sign-in's or link's transaction spends.
    var singleUse: SingleUseClaims?
    /// The key the per-identity abuse limit counted under (refunded when the store refuses).
    var limitKey: String
    /// Permissions granted, for the answer.
    var granted: [String]
    /// Permissions declined, for the answer.
    var declined: [String]
    /// How the credential was presented: what a session it opens records.
    var method: SessionMethod
    /// Facebook's `token_for_business` for the person, when a link asked for it (joining by
    /// business is on): stored with the identity, and a link it would split from the same
    /// person's account is a conflict (`Verdicts.link`).
    var businessToken: String? = nil
}

extension LoginRecord {
    /// The record of a sign-in of `proven`: the identity, its mapped profile, a fresh user id for
    /// a first sign-in, and what it opens (a session, or an Easy Login code).
    init(
        _ proven: ProvenIdentity, configuration: ServerConfiguration, session: NewSession?,
        authorizationCode: NewAuthorizationCode? = nil
    ) {
        self.init(
            identity: proven.identity, mappedProperties: proven.mappedProperties,
            refreshProperties: configuration.users.refreshPropertiesOnLogin,
            newUserID: SessionTokens.randomToken(bytes: 15), session: session, singleUse: proven.singleUse,
            authorizationCode: authorizationCode)
    }
}

extension FacebookIdentity {
    /// The identity ready for a link or an upgrade, with `mapping` applied, seen at `now`.
    func proven(mapping: FieldMapping, at now: Date) -> ProvenIdentity {
        ProvenIdentity(
            identity: stored(at: now), mappedProperties: mapping.apply(to: profile), singleUse: singleUse,
            limitKey: limitKey, granted: granted, declined: declined,
            method: kind == .limitedLogin ? .limitedLogin : .classic)
    }
}
