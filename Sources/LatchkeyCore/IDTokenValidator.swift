import Crypto
import Foundation
import LatchkeyAPI
import _CryptoExtras

/// On-device checks of a Limited Login id token, as Facebook's SDKs make them (facebook-protocol.md
/// §7.3): RS256 with a published key, issuer on facebook.com, audience = the app, not expired,
/// issued within ten minutes, nonce equal to the one sent. The server checks again; this lets an
/// app read the `Profile` without a round trip and refuse an obviously bad token early.
public struct IDTokenValidator: Sendable {
    private let appID: String
    private let keys: [String: _RSA.Signing.PublicKey]
    private let maximumAge: TimeInterval

    /// A validator for `appID` with keys from a JWKS document (`{"keys":[{kid,n,e}]}`).
    public init(appID: String, jwks: Data, maximumAge: TimeInterval = 600) throws(LatchkeyError) {
        guard let document = try? JSONValue.decode(jwks), let entries = document["keys"]?.arrayValue else {
            throw LatchkeyError.sdk("invalid_configuration", "The JWKS document is not valid JSON with keys.")
        }
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for jwk in entries {
            guard jwk["kty"] == "RSA", let kid = jwk["kid"]?.stringValue,
                let n = jwk["n"]?.stringValue.flatMap(Base64URL.decode),
                let e = jwk["e"]?.stringValue.flatMap(Base64URL.decode),
                let key = try? _RSA.Signing.PublicKey(n: n, e: e)
            else { continue }
            keys[kid] = key
        }
        guard !keys.isEmpty else {
            throw LatchkeyError.sdk("invalid_configuration", "The JWKS document has no RSA keys.")
        }
        self.appID = appID
        self.keys = keys
        self.maximumAge = maximumAge
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
            throw LatchkeyError.sdk("network_unavailable", "Facebook's keys could not be fetched.")
        }
        guard response.status == 200 else {
            throw LatchkeyError.sdk(
                "network_unavailable", "Facebook's keys could not be fetched (HTTP \(response.status)).")
        }
        return try IDTokenValidator(appID: appID, jwks: response.body)
    }

    /// Validates `token` and returns its profile.
    /// - Parameters:
    ///   - nonce: the nonce given to Facebook (compared byte for byte, as Facebook's SDKs do).
    ///   - now: the current time.
    /// - Throws: `LatchkeyError` with code `id_token_invalid`, `id_token_unknown_key`, `id_token_wrong_issuer`,
    ///   `id_token_wrong_audience`, `id_token_expired`, `id_token_iat_invalid` or `nonce_mismatch`.
    public func validate(_ token: String, nonce: String, now: Date = Date()) throws(LatchkeyError) -> Profile {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]),
            let payloadData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]), let header = try? JSONValue.decode(headerData),
            let claims = try? JSONValue.decode(payloadData)
        else { throw Self.failure("id_token_invalid", "The id token is not a well-formed JWT.") }
        guard header["alg"] == "RS256", let kid = header["kid"]?.stringValue, !kid.isEmpty else {
            throw Self.failure("id_token_invalid", "The id token must be RS256 with a kid.")
        }
        guard let key = keys[kid] else { throw Self.failure("id_token_unknown_key", "Unknown signing key.") }
        let input = Data(parts[0].utf8) + Data(".".utf8) + Data(parts[1].utf8)
        guard
            key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: input),
                padding: .insecurePKCS1v1_5)
        else { throw Self.failure("id_token_invalid", "The id token's signature is invalid.") }
        guard let issuer = claims["iss"]?.stringValue.flatMap(URL.init(string:)), let host = issuer.host,
            host == "facebook.com" || host.hasSuffix(".facebook.com")
        else { throw Self.failure("id_token_wrong_issuer", "The id token was not issued by Facebook.") }
        guard claims["aud"]?.stringValue == appID else {
            throw Self.failure("id_token_wrong_audience", "The id token was issued to another app.")
        }
        guard let exp = claims["exp"]?.intValue, TimeInterval(exp) > now.timeIntervalSince1970 else {
            throw Self.failure("id_token_expired", "The id token has expired.")
        }
        guard let iat = claims["iat"]?.intValue, TimeInterval(iat) >= now.timeIntervalSince1970 - maximumAge else {
            throw Self.failure("id_token_iat_invalid", "The id token was issued too long ago.")
        }
        guard let claimed = claims["nonce"]?.stringValue, !claimed.isEmpty, ConstantTime.equals(claimed, nonce) else {
            throw Self.failure("nonce_mismatch", "The id token's nonce does not match.")
        }
        guard claims["jti"]?.stringValue?.isEmpty == false, claims["sub"]?.stringValue?.isEmpty == false else {
            throw Self.failure("id_token_invalid", "The id token lacks jti or sub.")
        }
        return Profile(claims: claims)
    }

    private static func failure(_ code: String, _ message: String) -> LatchkeyError {
        LatchkeyError(code: code, message: message)
    }
}
