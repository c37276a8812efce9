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
    /// one, or one whose key is revoked or signed out since.
    func session(_ request: Request, now: Date) async throws -> (ConsoleSession, StoredAdminKey)? {
        // Every cookie of the name, not the first: a browser sends one planted under a longer path
        // first, and neither it nor an ended session of ours may hide the live one.
        let name = ConsoleSession.cookieName(secure: secureCookies)
        for value in Self.cookies(request, named: name) {
            guard let session = ConsoleSession(sealed: value, keys: keys.current.requestKeys),
                let key = try await authentication.store.adminKey(id: session.keyID),
                session.isValid(for: key, now: now)
            else { continue }
            return (session, key)
        }
        return nil
    }

    /// The values of every cookie named `name` the request carries, at most 8.
    static func cookies(_ request: Request, named name: String) -> [String] {
        var values: [String] = []
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") where values.count < 8 {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                    values.append(parts[1].trimmingCharacters(in: .whitespaces))
                }
            }
        }
        return values
    }

    /// Whether the request carries a session cookie at all (to clear a dead one).
    func hasSessionCookie(_ request: Request) -> Bool {
        !Self.cookies(request, named: ConsoleSession.cookieName(secure: secureCookies)).isEmpty
    }

    /// The session cookie holding `session` sealed, or emptied (`nil`): never readable by a
    /// script, never sent from another site; over http, only for `/admin`.
    func cookie(_ session: ConsoleSession?, now: Date) throws -> Cookie {
        Cookie(
            name: ConsoleSession.cookieName(secure: secureCookies),
            value: try session?.sealed(key: keys.current.signing) ?? "",
            maxAge: session?.cookieLifetime(at: now) ?? 0, path: secureCookies ? "/" : "/admin",
            secure: secureCookies, httpOnly: true, sameSite: .strict)
    }

    /// The sign-in form's token cookie holding `token`, or emptied.
    func signInCookie(_ token: String?) -> Cookie {
        Cookie(
            name: ConsoleSession.signInCookieName(secure: secureCookies), value: token ?? "",
            maxAge: token == nil ? 0 : 3600, path: secureCookies ? "/" : "/admin/sign-in", secure: secureCookies,
            httpOnly: true, sameSite: .strict)
    }

    /// Whether a form's post comes from the console's own pages: its `Origin` (every current
    /// browser sends one on a post) names this host or the public URL, and `Sec-Fetch-Site`, when
    /// sent, says the same origin. Behind the session's form token, and SameSite=Strict cookies.
    func sameOrigin(_ request: Request) -> Bool {
        let site = request.headers[.init("Sec-Fetch-Site")!]
        if let site, site != "same-origin" && site != "none" { return false }
        // Every current browser sends one of the two with a form's post; a post with neither is
        // not a browser's, and the console is for browsers.
        guard let origin = request.headers[.init("Origin")!]?.lowercased() else { return site != nil }
        if let publicOrigin, origin == publicOrigin { return true }
        guard let authority = request.head.authority?.lowercased(), let url = URLComponents(string: origin),
            let host = url.host
        else { return false }
        return authority == host + (url.port.map { ":\($0)" } ?? "")
    }

    /// A refusal as a console page, with the navigation when a session exists.
    func refusal(
        _ status: HTTPResponse.Status, _ message: String, session: ConsoleSession, _ key: StoredAdminKey
    ) -> Response {
        renderer.page(
            "message", title: status.code == 404 ? "Not found" : "Not done",
            view: ConsoleViews.Message(text: message),
            chrome: ConsoleChrome(keyName: key.name, formToken: session.formToken, section: .none), status: status)
    }
}
