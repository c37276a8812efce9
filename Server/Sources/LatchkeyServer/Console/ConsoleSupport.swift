import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI

/// What the console's middleware and pages share: the session cookie, the origin check, and
/// refusals shown as pages.
struct ConsoleSupport: Sendable {
    let authentication: AdminAuthentication
    let keys: SessionKeys
    let renderer: ConsoleRenderer
    let reading: RequestReading
    let clock: @Sendable () -> Date
    /// Cookies are `Secure` when the public URL is https.
    let secureCookies: Bool
    /// `LATCHKEY_PUBLIC_URL`'s scheme, host and port, which a form's `Origin` may also be (a proxy
    /// that rewrites `Host` still serves the console from there).
    let publicOrigin: String?

    init(
        configuration: ServerConfiguration, authentication: AdminAuthentication, keys: SessionKeys,
        renderer: ConsoleRenderer
    ) {
        self.authentication = authentication
        self.keys = keys
        self.renderer = renderer
        reading = RequestReading(maximumBodySize: configuration.http.maximumBodySize)
        clock = configuration.clock
        let publicURL = configuration.http.publicURL.flatMap { URLComponents(string: $0) }
        secureCookies = publicURL?.scheme?.lowercased() == "https"
        publicOrigin = publicURL.flatMap { url in
            guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
            return scheme + "://" + host + (url.port.map { ":\($0)" } ?? "")
        }
    }

    /// The live session the request's cookie holds, and its admin key; `nil` for none, an expired
    /// one, or one whose key is revoked.
    func session(_ request: Request, now: Date) async throws -> (ConsoleSession, StoredAdminKey)? {
        guard let value = request.cookies[ConsoleSession.cookieName]?.value,
            let session = ConsoleSession(sealed: value, keys: keys.current.requestKeys),
            let key = try await authentication.store.adminKey(id: session.keyID), session.isValid(for: key, now: now)
        else { return nil }
        return (session, key)
    }

    /// The session cookie holding `value`, or emptied (`nil`): only for `/admin`, never readable
    /// by a script, never sent from another site.
    func cookie(_ value: String?) -> Cookie {
        Cookie(
            name: ConsoleSession.cookieName, value: value ?? "",
            maxAge: value == nil ? 0 : Int(ConsoleSession.idleLifetime), path: "/admin", secure: secureCookies,
            httpOnly: true, sameSite: .strict)
    }

    /// Whether a form's post comes from the console's own pages: its `Origin` (every current
    /// browser sends one on a post) names this host or the public URL, and `Sec-Fetch-Site`, when
    /// sent, says the same origin. Behind the session's form token, and SameSite=Strict cookies.
    func sameOrigin(_ request: Request) -> Bool {
        if let site = request.headers[.init("Sec-Fetch-Site")!], site != "same-origin" && site != "none" {
            return false
        }
        guard let origin = request.headers[.init("Origin")!]?.lowercased() else { return true }
        if let publicOrigin, origin == publicOrigin { return true }
        guard let authority = request.head.authority?.lowercased(), let url = URLComponents(string: origin),
            let host = url.host
        else { return false }
        return authority == host + (url.port.map { ":\($0)" } ?? "")
    }

    /// A refusal as a console page, with the navigation when a session exists.
    func refusal(
        _ status: HTTPResponse.Status, _ message: String, session: ConsoleSession?, _ key: StoredAdminKey?
    ) -> Response {
        let chrome = session.flatMap { session in
            key.map { ConsoleChrome(keyName: $0.name, formToken: session.formToken, section: .none) }
        }
        return renderer.page(
            "message", title: status.code == 404 ? "Not found" : "Not done",
            view: ConsoleViews.Message(kind: "error", text: message, back: nil), chrome: chrome, status: status)
    }
}
