import Foundation
import Hummingbird

/// Checks `Authorization: Bearer <access token>` before a route runs and puts the token's claims
/// into the context (`LatchkeyRequestContext.session`), so no handler authenticates by hand.
///
/// Two strengths: `.activeSession` also asks the store whether the session is still active (a
/// sign-out, a revocation or a disabled user take effect at once); `.signature` checks only what
/// the token proves (signature, issuer, audience, expiry), for a route whose own store operation
/// checks the session in the same read (`GET /v1/users/me`, the hottest path).
struct BearerAuthentication: RouterMiddleware {
    typealias Context = LatchkeyRequestContext

    /// What is checked besides the token itself.
    enum Strength: Sendable {
        /// The token only; the route must check the session itself.
        case signature
        /// The token, and that its session is active.
        case activeSession
    }

    let tokens: SessionTokens
    let store: any LatchkeyStore
    let clock: @Sendable () -> Date
    let strength: Strength

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization], let token = Self.bearerToken(header) else {
            throw APIError.unauthorized
        }
        let claims = try tokens.verify(token, now: clock())
        if strength == .activeSession {
            guard try await store.isSessionActive(id: claims.sessionID) else { throw APIError.sessionEnded }
        }
        var context = context
        context.session = claims
        return try await next(request, context)
    }

    /// The token of `Authorization: Bearer <token>` (scheme case-insensitive, RFC 6750 §2.1),
    /// spaces around it dropped; `nil` for another scheme.
    ///
    /// Read on the UTF-8 bytes: this runs on every authenticated request, and going through
    /// `Character`s (reversing a string to trim it) was nearly half of `GET /v1/users/me`'s CPU.
    static func bearerToken(_ header: String) -> String? {
        let scheme = "bearer ".utf8
        var bytes = header.utf8[...]
        guard bytes.count > scheme.count,
            zip(bytes.prefix(scheme.count), scheme).allSatisfy({ byte, expected in
                byte == expected || (expected != UInt8(ascii: " ") && byte | 0x20 == expected)
            })
        else { return nil }
        bytes = bytes.dropFirst(scheme.count)
        while bytes.first == UInt8(ascii: " ") { bytes = bytes.dropFirst() }
        while bytes.last == UInt8(ascii: " ") { bytes = bytes.dropLast() }
        return String(Substring(bytes))
    }
}
