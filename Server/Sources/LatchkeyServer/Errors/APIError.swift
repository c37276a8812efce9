import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import NIOCore

/// The server's one error type: an HTTP status, a stable code, a public message, and an optional
/// underlying cause that is logged, never sent.
package struct APIError: Error, Sendable {
    /// HTTP status.
    package let status: HTTPResponse.Status
    /// Stable code from `ErrorCode`.
    package let code: ErrorCode
    /// Safe, human message.
    package let message: String
    /// Seconds a client should wait before retrying (sent as `Retry-After`).
    package let retryAfter: Int?
    /// What really went wrong, for the log.
    package let cause: (any Error & Sendable)?
    /// Sent beside `code` and `message` with `identity_already_linked` only.
    package var linkTicket: String? = nil
    /// Sent beside `code` and `message` with `second_factor_required` only.
    package var challenge: SecondFactorChallengeBody? = nil

    /// Creates an error.
    package init(
        _ status: HTTPResponse.Status, _ code: ErrorCode, _ message: String, retryAfter: Int? = nil,
        cause: (any Error & Sendable)? = nil
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
        self.cause = cause
    }

    /// The JSON response for this error.
    func response() -> Response {
        let body =
            (try? JSONEncoder.latchkey.encode(
                ErrorBody(code: code, message: message, linkTicket: linkTicket, challenge: challenge)))
            ?? Data()
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension APIError {
    static func invalidRequest(_ message: String) -> APIError { APIError(.badRequest, .invalidRequest, message) }
    static func malformed(_ message: String) -> APIError { APIError(.badRequest, .malformedRequest, message) }
    static let unauthorized = APIError(.unauthorized, .unauthorized, "A valid access token is required.")
    static let sessionEnded = APIError(.unauthorized, .sessionRevoked, "This session has ended; sign in again.")
    static let notUserToken = APIError(
        .unauthorized, .facebookNotUserToken, "This is not a Facebook user access token.")
    static let nonceInvalid = APIError(
        .unauthorized, .nonceInvalid, "The nonce was not issued by this server, expired, or was used.")
    static func facebookUnavailable(_ message: String, cause: (any Error & Sendable)? = nil) -> APIError {
        APIError(.serviceUnavailable, .facebookUnavailable, message, retryAfter: 5, cause: cause)
    }
    static func appleUnavailable(_ message: String, cause: (any Error & Sendable)? = nil) -> APIError {
        APIError(.serviceUnavailable, .appleUnavailable, message, retryAfter: 5, cause: cause)
    }
}
