import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import Logging
import NIOCore
import NIOHTTP1

/// Turns every error into the JSON error body: `APIError`s as they are, Hummingbird's own errors
/// (404, 413, …) into the matching code, and anything else into a bare 500 whose cause is logged.
/// A known path asked with another method is 405 with `Allow`, not the router's 404.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTable
    /// Answers by error code (`latchkey_errors_total`).
    var metrics: ServerMetrics? = nil

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            let failure = APIError.from(error, logger: context.logger)
            // The router's own 404 only: a handler's `not_found` (an unlinked identity, guests
            // off) is an answer of a known path and method.
            if failure.code == .notFound, !(error is APIError), let allowed = routes.methods(for: request.uri.path) {
                var response = APIError(
                    .methodNotAllowed, .methodNotAllowed, "This endpoint does not accept this method."
                ).response()
                response.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
                metrics?.error(code: ErrorCode.methodNotAllowed.rawValue)
                return response
            }
            metrics?.error(code: failure.code.rawValue)
            return failure.response()
        }
    }
}

extension APIError {
    /// Any error as an `APIError`, logging causes (never sent) on the way; shared with the token
    /// endpoint, which renders the same errors in OAuth's shape.
    static func from(_ error: any Error, logger: Logger) -> APIError {
        switch error {
        case let error as APIError:
            if error.cause is CredentialRefusal || error.cause is UnrecognizedGraphError {
                // Our misconfiguration, or Facebook saying something new: an operator must see it.
                logger.error(
                    "latchkey.facebook.refused",
                    metadata: [
                        "latchkey.error.code": "\(error.code)",
                        "latchkey.error.cause": "\(String(describing: error.cause.map { "\($0)" } ?? ""))",
                    ])
            } else if let cause = error.cause {
                logger.warning(
                    "latchkey.request.failed",
                    metadata: [
                        "latchkey.error.code": "\(error.code)", "latchkey.error.cause": "\(String(describing: cause))",
                    ])
            }
            return error
        case let error as StoreUnavailable:
            // The operator's problem, not the client's: logged loudly, answered with a retry hint.
            logger.error("latchkey.database.unavailable", metadata: ["latchkey.error.cause": "\(error.reason)"])
            return APIError(
                .serviceUnavailable, .unavailable, "The database is not answering; try again shortly.", retryAfter: 5)
        case let error as HTTPError: return translate(error)
        case is NIOTooManyBytesError:
            return APIError(.contentTooLarge, .requestTooLarge, "The request body is too large.")
        case let error as HTTPParserError:
            // Met while reading the body: a client that ended its body short of its Content-Length
            // (`invalidEOFState`) or broke its framing. Its fault, not ours: no operator needs to see it.
            logger.debug("latchkey.request.unreadable_body", metadata: ["latchkey.error.cause": "\(error)"])
            return APIError.malformed("The request body could not be read.")
        default:
            logger.error(
                "latchkey.request.internal_error", metadata: ["latchkey.error.cause": "\(String(reflecting: error))"])
            return APIError(.internalServerError, .internalError, "Something went wrong on our side.")
        }
    }

    /// Hummingbird's own errors (404, 405, 413, …) as the matching codes.
    static func translate(_ error: HTTPError) -> APIError {
        switch error.status {
        case .notFound: APIError(.notFound, .notFound, "No such endpoint.")
        case .methodNotAllowed:
            APIError(.methodNotAllowed, .methodNotAllowed, "This endpoint does not accept this method.")
        case .contentTooLarge: APIError(.contentTooLarge, .requestTooLarge, "The request body is too large.")
        case .badRequest: APIError(.badRequest, .malformedRequest, "The request body could not be read.")
        case .unsupportedMediaType: APIError(.unsupportedMediaType, .malformedRequest, "Send JSON (application/json).")
        default: APIError(error.status, .invalidRequest, error.body ?? "The request was refused.")
        }
    }
}
