import Foundation
import LatchkeyAPI

/// What passing a challenge does, written by the server when it issues the challenge and read
/// back when a code comes: the store keeps it as opaque JSON (`NewFactorChallenge.plan`). It holds
/// no secret: a challenge's plan is what the sign-in would have answered, minus the tokens, which
/// are made fresh when the code passes.
struct FactorChallengePlan: Codable, Sendable, Equatable {
    /// What kind of answer the challenge completes.
    enum Kind: String, Codable, Sendable {
        /// A sign-in's JSON answer (`SignInBody`): classic, Limited Login, Apple, a guest's upgrade.
        case signIn = "sign_in"
        /// An Easy Login code for the app, through the browser (`POST /v1/oauth/factor`).
        case easyLogin = "easy_login"
        /// A signed-in session's step-up (`SessionBody` for the same session).
        case stepUp = "step_up"
    }

    var kind: Kind
    /// How the session opens (sign-in).
    var method: SessionMethod?
    /// The identity that signed in (sign-in, Easy Login).
    var provider: String?
    var subject: String?
    /// The sign-in's answer: whether it created the user, and the permissions.
    var created: Bool?
    var granted: [String]?
    var declined: [String]?
    /// Easy Login: the app's request, to store its code and redirect to it.
    var clientID: String?
    var redirectURI: String?
    var codeChallenge: String?
    var state: String?

    /// A sign-in's plan: its answer as it would have been, minus the session.
    static func signIn(_ proven: ProvenIdentity) -> FactorChallengePlan {
        FactorChallengePlan(
            kind: .signIn, method: proven.method, provider: proven.identity.provider,
            subject: proven.identity.subject, created: false, granted: proven.granted, declined: proven.declined)
    }

    /// The plan as the store keeps it. Written with `JSONValue`'s encoder, not `JSONEncoder`: every
    /// sign-in writes one (it is bound whether or not it is kept), and Foundation's encoder cost
    /// more than the rest of the challenge.
    func encoded() throws -> String {
        var object: [String: JSONValue] = ["kind": .string(kind.rawValue)]
        func put(_ key: CodingKeys, _ value: JSONValue?) { if let value { object[key.stringValue] = value } }
        put(.method, method.map { .string($0.rawValue) })
        put(.provider, provider.map(JSONValue.string))
        put(.subject, subject.map(JSONValue.string))
        put(.created, created.map(JSONValue.bool))
        put(.granted, granted.map { .array($0.map(JSONValue.string)) })
        put(.declined, declined.map { .array($0.map(JSONValue.string)) })
        put(.clientID, clientID.map(JSONValue.string))
        put(.redirectURI, redirectURI.map(JSONValue.string))
        put(.codeChallenge, codeChallenge.map(JSONValue.string))
        put(.state, state.map(JSONValue.string))
        return String(decoding: JSONValue.object(object).encoded(), as: UTF8.self)
    }

    /// The JSON names, for both directions.
    enum CodingKeys: String, CodingKey {
        case kind, method, provider, subject, created, granted, declined, clientID, redirectURI, codeChallenge, state
    }

    /// The plan `text` holds, or `nil` (a plan this version cannot read counts as no challenge).
    static func decode(_ text: String) -> FactorChallengePlan? {
        try? JSONDecoder().decode(FactorChallengePlan.self, from: Data(text.utf8))
    }

    /// The identity of a sign-in's plan.
    var identity: (provider: String, subject: String)? {
        guard let provider, let subject else { return nil }
        return (provider, subject)
    }
}
