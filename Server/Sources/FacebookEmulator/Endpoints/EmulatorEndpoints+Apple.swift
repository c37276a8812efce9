import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import NIOCore

extension EmulatorEndpoints {
    /// `GET /auth/keys`: Apple's JWKS, its own keys, never Facebook's.
    func appleKeys() async -> Response {
        .json(["keys": .array(await state.appleKeys.map(\.jwk))])
    }

    /// `POST /auth/token` ("Generate and validate tokens"): a code or a refresh token for tokens,
    /// after the client secret checks out. Missing parameters come first, then the grant type, then
    /// the client, then the grant, in OAuth's order (RFC 6749 §5.2).
    func appleToken(_ request: EmulatorRequest) async throws -> Response {
        guard let clientID = request["client_id"], let secret = request["client_secret"],
            let grantType = request["grant_type"]
        else { throw AppleError.invalidRequest }
        guard grantType == "authorization_code" || grantType == "refresh_token" else {
            throw AppleError.unsupportedGrantType
        }
        try await checkAppleClient(clientID: clientID, secret: secret)
        if grantType == "authorization_code" {
            guard let code = request["code"] else { throw AppleError.invalidRequest }
            return .json(
                try await state.exchangeAppleCode(code, clientID: clientID, redirectURI: request["redirect_uri"]))
        }
        guard let refreshToken = request["refresh_token"] else { throw AppleError.invalidRequest }
        return .json(try await state.refreshAppleToken(refreshToken, clientID: clientID))
    }

    /// `POST /auth/revoke` ("Revoke tokens"): 200 with an empty body whether the token was
    /// revoked or already invalid. A token issued to another client id is invalid for this one,
    /// so it is answered the same and stays live.
    func appleRevoke(_ request: EmulatorRequest) async throws -> Response {
        guard let clientID = request["client_id"], let secret = request["client_secret"],
            let token = request["token"]
        else { throw AppleError.invalidRequest }
        if let hint = request["token_type_hint"], hint != "refresh_token", hint != "access_token" {
            throw AppleError.invalidRequest
        }
        try await checkAppleClient(clientID: clientID, secret: secret)
        // The hint is only a hint (RFC 7009 §2.1): the token is looked up whatever its kind.
        await state.revokeAppleToken(token, clientID: clientID)
        var headers = HTTPFields()
        headers[.contentLength] = "0"
        return Response(status: .ok, headers: headers)
    }

    /// The client secret checks of "Creating a client secret", each an `invalid_client`.
    private func checkAppleClient(clientID: String, secret: String) async throws {
        guard let registration = state.appleRegistration,
            AppleClientSecret.isValid(secret, clientID: clientID, registration: registration, now: await state.now())
        else { throw AppleError.invalidClient }
    }
}
