import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import NIOCore

extension APIError {
    /// The RFC 6749 error code for this error, as the token endpoint reports it (§5.2).
    var oauthError: String {
        switch code {
        case .refreshTokenInvalid, .refreshTokenReused, .refreshTokenSuperseded, .authorizationCodeInvalid,
            .authorizationCodeReused,
            .userDisabled, .identityAlreadyLinked, .linkRequestInvalid, .reauthenticationRequired,
            .secondFactorRequired:
            "invalid_grant"
        case .clientUnknown: "invalid_client"
        case .unsupportedGrantType: "unsupported_grant_type"
        case _ where status == .serviceUnavailable || status == .tooManyRequests: "temporarily_unavailable"
        case _ where status.code >= 500: "server_error"
        default: "invalid_request"
        }
    }

    /// The status the token endpoint answers with: 400 for every grant problem, 401 for an unknown
    /// client (§5.2), server errors as they are.
    private var oauthStatus: HTTPResponse.Status {
        // 429 as it is: OAuth libraries and HTTP clients back off on it and its Retry-After.
        if status.code >= 500 || status == .contentTooLarge || status == .tooManyRequests { return status }
        return code == .clientUnknown ? .unauthorized : .badRequest
    }

    /// This error in the token endpoint's RFC 6749 shape, with Latchkey's code alongside.
    func oauthResponse() -> Response {
        let body = OAuthErrorBody(
            error: oauthError, errorDescription: message, errorCode: code, linkTicket: linkTicket)
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[HTTPField.Name("Pragma")!] = "no-cache"
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return Response(
            status: oauthStatus, headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: (try? JSONEncoder.latchkey.encode(body)) ?? Data())))
    }
}
