import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import LatchkeyShared

/// Guards every console page but the sign-in: the `latchkey_console` cookie must open to a live
/// `ConsoleSession` of an admin key that is not revoked (read on every request, so a revocation
/// ends the key's console sessions at once, on every node). A form's post must come from the
/// console itself and carry the session's form token (`csrf`). Each request is then the key's
/// audited call (`AdminAuthentication.audited`), its answer renews the cookie, and a refusal
/// (`APIError`) is shown as a console page rather than JSON.
struct ConsoleAuthentication: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let console: ConsoleSupport

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let now = console.clock()
        guard let (session, key) = try await console.session(request, now: now) else {
            var response = Response(status: .seeOther, headers: [.location: "/admin/sign-in"])
            if request.cookies[ConsoleSession.cookieName] != nil { response.setCookie(console.cookie(nil)) }
            return response
        }
        var request = request
        if request.method != .get && request.method != .head {
            guard console.sameOrigin(request) else {
                return console.refusal(.forbidden, "This form did not come from this console.", session: session, key)
            }
            // The body is read here for the form token, and kept for the handler.
            let body = try await request.collectBody(upTo: console.reading.maximumBodySize)
            let token = FormEncoding.pairs(String(buffer: body)).first { $0.0 == "csrf" }?.1
            guard session.acceptsForm(token) else {
                return console.refusal(
                    .forbidden, "This form has expired: open the page again and repeat.", session: session, key)
            }
        }
        var context = context
        context.adminKey = key
        context.consoleSession = session
        var response: Response
        do {
            response = try await console.authentication.audited(request, context, key: key, next: next)
        } catch let error as APIError {
            response = console.refusal(error.status, error.message, session: session, key)
        }
        // A sign-out answers with its own, emptied cookie.
        if response.headers[.setCookie] == nil {
            response.setCookie(console.cookie(try session.renewed(at: now).sealed(key: console.keys.current.signing)))
        }
        return response
    }
}
