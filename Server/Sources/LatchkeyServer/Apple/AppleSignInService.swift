import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import Logging

/// `POST /v1/auth/apple`: verifies what Sign in with Apple gave the app, exchanges its
/// authorization code with Apple (always: the refresh token is what account deletion revokes),
/// finds or creates the user and opens a session.
struct AppleSignInService: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore
    let verifier: AppleIDTokenVerifier
    /// `nil` when Sign in with Apple is off (every path is then refused by `requireEnabled`).
    let apple: AppleClient?
    let sealing: ProviderTokenSealing
    let tokens: SessionTokens
    let limits: AbuseLimits
    /// Facebook's sign-in, whose `open` every provider's sign-in goes through.
    let facebook: SignInService

    /// The fields `POST /v1/auth/apple` accepts: the wire type's, which the SDK writes.
    static let requestFields = AppleExchangeRequest.CodingKeys.fieldNames

    /// The longest name part accepted: far above any real one, and bounded so a client cannot
    /// fill a user's properties.
    static let maximumNameLength = 256

    /// Reads `POST /v1/auth/apple`'s fields as the wire type, each bounded.
    static func request(_ fields: [String: JSONValue]) throws -> AppleExchangeRequest {
        typealias Key = AppleExchangeRequest.CodingKeys
        func required(_ key: Key, maxLength: Int) throws -> String {
            guard let value = try RequestReading.string(fields, key.stringValue, maxLength: maxLength), !value.isEmpty
            else { throw APIError.invalidRequest("Send idToken, authorizationCode and nonce.") }
            return value
        }
        func name(_ key: Key) throws -> String? {
            guard let value = try RequestReading.string(fields, key.stringValue, maxLength: maximumNameLength) else {
                return nil
            }
            guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw APIError.invalidRequest("'\(key.stringValue)' must not contain control characters.")
            }
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            return trimmed.isEmpty ? nil : trimmed
        }
        return AppleExchangeRequest(
            idToken: try required(.idToken, maxLength: CompactJWS.maximumLength),
            authorizationCode: try required(.authorizationCode, maxLength: 1024),
            nonce: try required(.nonce, maxLength: 512), givenName: try name(.givenName),
            familyName: try name(.familyName), redirectURI: try redirectURI(fields))
    }

    /// The web flow's `redirectUri`: an absolute https URL (Apple accepts no other), or absent.
    static func redirectURI(_ fields: [String: JSONValue]) throws -> String? {
        let key = AppleExchangeRequest.CodingKeys.redirectURI.stringValue
        guard let value = try RequestReading.string(fields, key, maxLength: 2048) else { return nil }
        guard let url = URL(string: value), url.scheme == "https", url.host?.isEmpty == false,
            !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw APIError.invalidRequest("redirectUri must be the https return URL of Apple's web authorization.") }
        return value
    }

    /// Refuses every Apple path while Apple is not configured, as if it did not exist.
    func requireEnabled() throws {
        guard configuration.apple.isEnabled else {
            throw APIError(
                .notFound, .notFound, "Sign in with Apple is not enabled on this server (LATCHKEY_APPLE_CLIENT_IDS).")
        }
    }

    /// `POST /v1/auth/apple`: the credential proven, then signed in as every provider's is.
    func signIn(_ request: AppleExchangeRequest, client: ClientInfo, logger: Logger) async throws -> SignInBody {
        try await facebook.open(try await prove(request), client: client, logger: logger) { login, now in
            try await store.signIn(login, now: now)
        }
    }

    /// Verifies a sign-in's or a link's Apple credential and counts it against the per-identity
    /// limit; exchanges the code with Apple and stores the refresh token (sealed) before anything
    /// depends on it. The person proven, with the properties Apple's fields map to.
    func prove(_ request: AppleExchangeRequest) async throws -> ProvenIdentity {
        try requireEnabled()
        var identity = try await verifier.verify(request.idToken, nonce: request.nonce)
        try await limits.enforce(limits.rules.signInPerIdentity, key: identity.limitKey)
        do {
            try await exchange(request.authorizationCode, redirectURI: request.redirectURI, for: identity)
        } catch {
            await limits.refund(limits.rules.signInPerIdentity, key: identity.limitKey)
            throw error
        }
        identity.addName(given: request.givenName, family: request.familyName)
        let mapping = FieldMapping(trusted: configuration.apple.fieldsMapping)
        let now = configuration.clock()
        let stored = identity.stored(at: now)
        return ProvenIdentity(
            identity: stored, mappedProperties: mapping.apply(to: identity.profile), singleUse: identity.singleUse,
            limitKey: identity.limitKey, granted: stored.grantedPermissions, declined: [], method: .apple)
    }

    /// Exchanges the code under the client id the id token was issued to, checks that Apple
    /// issued it with that token (same person, same client), and stores the refresh token.
    private func exchange(_ code: String, redirectURI: String?, for identity: AppleIdentity) async throws {
        guard let apple else { throw APIError.appleUnavailable("Sign in with Apple is not configured.") }
        let tokens: AppleClient.Tokens
        switch await apple.exchange(code: code, clientID: identity.clientID, redirectURI: redirectURI) {
        case .success(let answer): tokens = answer
        case .failure(.invalidGrant), .failure(.other):
            throw APIError(
                .badRequest, .appleCodeInvalid,
                "Apple refused the authorization code: it was used, is older than five minutes, or belongs to another app. Sign in with Apple again."
            )
        case .failure(.invalidClient):
            throw APIError.appleUnavailable(
                "Sign in with Apple is not working on this server right now (its operator has been told).")
        case .failure(.unreachable):
            throw APIError.appleUnavailable("Apple did not answer; try again.")
        }
        // Apple's own id token for the code names who the code is for: a code of one person (or
        // one client) must not go with another's id token. Apple always sends one ("Generate and
        // validate tokens"); an answer without it proves nothing, so nothing is signed in.
        guard let idToken = tokens.idToken, let jws = CompactJWS(idToken) else {
            throw APIError.appleUnavailable("Apple's answer had no id token; try again.")
        }
        let audiences =
            jws.claims["aud"]?.stringValue.map { [$0] }
            ?? (jws.claims["aud"]?.arrayValue ?? []).compactMap(\.stringValue)
        guard jws.claims["sub"]?.stringValue == identity.subject, audiences.contains(identity.clientID) else {
            throw APIError(.badRequest, .appleCodeInvalid, "The authorization code was not issued with this id token.")
        }
        guard let refreshToken = tokens.refreshToken, !refreshToken.isEmpty, refreshToken.utf8.count <= 4096 else {
            throw APIError.appleUnavailable("Apple's answer had no refresh token; try again.")
        }
        try await store.saveProviderToken(
            StoredProviderToken(
                provider: "apple", subject: identity.subject, clientID: identity.clientID,
                token: try sealing.seal(
                    refreshToken, provider: "apple", subject: identity.subject, clientID: identity.clientID)),
            now: configuration.clock())
    }
}
