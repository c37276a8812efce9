import Foundation
import LatchkeyAPI
import LatchkeyCrypto

/// On-device checks of a Limited Login id token, as Facebook's SDKs make them (facebook-protocol.md
/// §7.3): RS256 with a published key, issuer on facebook.com, audience = the app, not expired,
/// issued within ten minutes, nonce equal to the one sent (or its SHA-256 hex). The server checks
/// again; this lets an app read the `Profile` without a round trip and refuse an obviously bad
/// token early.
///
/// The checks are the server's own (`LatchkeyCrypto.LimitedLoginToken`) under the device policy
/// (`IDTokenPolicy.device`), so the two never disagree on what a header, a signature or a claim
/// means, and report the same error codes.
public struct IDTokenValidator: Sendable {
    private let keys: [String: RSAPublicKey]
    private let policy: IDTokenPolicy

    /// A validator for `appID` with keys from a JWKS document (`{"keys":[{kid,n,e}]}`).
    public init(appID: String, jwks: Data, maximumAge: TimeInterval = 600) throws(LatchkeyError) {
        guard let document = try? JSONValue.decode(jwks), document["keys"]?.arrayValue != nil else {
            throw LatchkeyError.sdk(.invalidConfiguration, "The JWKS document is not valid JSON with keys.")
        }
        let keys = RSAJWK.signingKeys(in: document)
        guard !keys.isEmpty else {
            throw LatchkeyError.sdk(.invalidConfiguration, "The JWKS document has no RSA keys.")
        }
        self.keys = keys
        self.policy = .device(appID: appID, maximumAge: maximumAge)
    }

    /// Fetches Facebook's JWKS (or an emulator's) over `transport` and builds a validator.
    public static func fetch(
        appID: String, jwksURL: URL, transport: any LatchkeyTransport
    ) async throws(LatchkeyError)
        -> IDTokenValidator
    {
        let response: LatchkeyHTTPResponse
        do {
            response = try await transport.send(LatchkeyHTTPRequest(method: "GET", url: jwksURL))
        } catch {
            throw LatchkeyError.sdk(.networkUnavailable, "Facebook's keys could not be fetched.")
        }
        guard response.status == 200 else {
            throw LatchkeyError.sdk(
                .networkUnavailable, "Facebook's keys could not be fetched (HTTP \(response.status)).")
        }
        return try IDTokenValidator(appID: appID, jwks: response.body)
    }

    /// Validates `token` and returns its profile.
    /// - Parameters:
    ///   - nonce: the nonce given to Facebook; the claim must equal it (as Facebook's SDKs require)
    ///     or its SHA-256 hex, compared in constant time.
    ///   - now: the current time.
    /// - Throws: `LatchkeyError` with code `id_token_invalid`, `id_token_unknown_key`, `id_token_wrong_issuer`,
    ///   `id_token_wrong_audience`, `id_token_expired`, `id_token_iat_invalid` or `nonce_mismatch`.
    public func validate(_ token: String, nonce: String, now: Date = Date()) throws(LatchkeyError) -> FacebookProfile {
        do {
            let parsed = try LimitedLoginToken(token)
            try parsed.verifySignature(with: keys[parsed.kid])
            return FacebookProfile(claims: try parsed.claims(policy: policy, nonce: nonce, now: now).all)
        } catch {
            throw LatchkeyError(code: error.code, message: error.message)
        }
    }
}
