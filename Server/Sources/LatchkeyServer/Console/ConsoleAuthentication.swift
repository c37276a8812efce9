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
            if console.hasSessionCookie(request) { response.setCookie(try console.cookie(nil, now: now)) }
            return response
        }
        var request = request
        var context = context
        context.adminKey = key
        context.consoleSession = session
        if request.method != .get {
            var refusal: String?
            if !console.sameOrigin(request) {
                refusal = "This form did not come from this console."
            } else {
                // The body is read here for the form token, and kept for the handler.
                let body = try await request.collectBody(upTo: console.reading.maximumBodySize)
                let token = FormEncoding.pairs(String(buffer: body)).first { $0.0 == "csrf" }?.1
                if !session.acceptsForm(token) { refusal = "This form has expired: open the page again and repeat." }
            }
            if let refusal {
                // Audited as the key's refused call: a forged form against a signed-in operator
                // leaves a trace naming the key.
                return try await console.authentication.audited(request, context, key: key) { _, _ in
                    console.refusal(.forbidden, refusal, session: session, key)
                }
            }
        }
        var response: Response
        do {
            response = try await console.authentication.audited(request, context, key: key, next: next)
        } catch let error as APIError {
            response = console.refusal(error.status, error.message, session: session, key)
        }
        // A sign-out answers with its own, emptied cookie.
        if response.headers[.setCookie] == nil {
            response.setCookie(try console.cookie(session.renewed(at: now), now: now))
        }
        return response
    }
}
