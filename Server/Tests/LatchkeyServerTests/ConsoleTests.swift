import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyShared
import NIOCore
import Testing

@testable import LatchkeyServer

/// The operators' web console (`/admin`) over HTTP, as a browser without JavaScript uses it: its
/// sign-in, cookie and form tokens, each page and change, what it refuses, and what it escapes.
/// The same flows in a real Chromium are `ConsoleBrowserTests`.
@Suite("Console")
struct ConsoleTests {
    /// The console's routes: a contract, listed in docs/operations.md (OpenAPIContractTests holds
    /// the router to it).
    static let routes: Set<String> = [
        "GET /admin", "GET /admin/console.css", "GET /admin/sign-in", "POST /admin/sign-in", "POST /admin/sign-out",
        "GET /admin/users", "GET /admin/users/{id}", "POST /admin/users/{id}/properties",
        "POST /admin/users/{id}/disable", "POST /admin/users/{id}/enable", "POST /admin/users/{id}/delete",
        "POST /admin/users/{id}/sessions/end", "POST /admin/users/{id}/sessions/{sessionId}/end",
        "POST /admin/users/{id}/identities/{provider}/{subject}/unlink", "POST /admin/users/{id}/factors/reset",
        "GET /admin/deletions", "POST /admin/deletions/{id}/approve", "POST /admin/deletions/{id}/refuse",
        "GET /admin/keys", "POST /admin/keys/rotate", "GET /admin/admin-keys", "POST /admin/admin-keys/{id}/revoke",
    ]

    /// A person signed in with Facebook: their user id and refresh token.
    static func person(_ stack: Stack, _ name: String = "alice") async throws -> (id: String, refresh: String) {
        let signedIn = try await stack.signIn(["accessToken": .string(try await stack.facebookToken(name))]).json()
        return (
            try #require(signedIn["user"]?["id"]?.stringValue),
            try #require(signedIn["session"]?["refresh_token"]?.stringValue)
        )
    }

    @Test("sign in with an admin key, see every page, sign out")
    func pages() async throws {
        try await Stack.run { stack in
            let key = try await AdminAPITests.adminKey(stack, name: "ops-laptop")
            let console = ConsoleClient(stack)
            let before = try await console.get("/admin")
            #expect(before.status == .seeOther && before.headers[.location] == "/admin/sign-in")

            let signedIn = try await console.signIn(key)
            #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/admin")
            let cookie = try #require(console.lastSetCookies.first { $0.hasPrefix("latchkey_console=") })
            for attribute in ["HttpOnly", "SameSite=Strict", "Path=/admin", "Max-Age=1800"] {
                #expect(cookie.contains(attribute), "\(attribute)")
            }
            #expect(!cookie.contains("Secure"), "the public URL is http")
            // The sign-in form's token is spent with it.
            #expect(console.cookies["latchkey_console_sign_in"] == nil)

            let (userID, _) = try await Self.person(stack)
            for (path, expected) in [
                ("/admin", "Sign-ins per hour"), ("/admin/users", userID), ("/admin/users/\(userID)", "Identities"),
                ("/admin/deletions", "No request"), ("/admin/keys", "signing"), ("/admin/admin-keys", "ops-laptop"),
            ] {
                let page = try await console.get(path)
                #expect(page.status == .ok, "\(path)")
                #expect(page.text.contains(expected) && page.text.contains("ops-laptop"), "\(path)")
                #expect(page.headers[.contentSecurityPolicy] == ConsoleRenderer.contentSecurityPolicy, "\(path)")
                #expect(page.headers[.cacheControl] == "no-store" && page.headers[.init("X-Frame-Options")!] == "DENY")
                #expect(!page.text.contains("<script"), "\(path)")
            }
            #expect(ConsoleRenderer.contentSecurityPolicy.hasPrefix("default-src 'none'"))
            let css = try await console.get("/admin/console.css")
            #expect(css.status == .ok && css.headers[.contentType] == "text/css; charset=utf-8")

            let copied = try #require(console.cookies["latchkey_console"])
            let out = try await console.post("/admin/sign-out", ["csrf": try await console.formToken()])
            #expect(out.status == .seeOther && console.cookies["latchkey_console"] == nil)
            #expect(try await console.get("/admin/users").status == .seeOther)
            // The sign-out ended the session on the server: a copy of its cookie opens nothing.
            console.setCookie("latchkey_console", copied)
            #expect(try await console.get("/admin/users").status == .seeOther)
            // Signing in again at the same instant opens a new session.
            #expect(try await console.signIn(key).status == .seeOther)
            #expect(try await console.get("/admin/users").status == .ok)
        }
    }

    @Test("the cookie is Secure when the public URL is https")
    func secureCookie() async throws {
        try await Stack.run({ $0.http.publicURL = "https://latchkey.test" }) { stack in
            let console = ConsoleClient(stack, origin: "https://latchkey.test")
            let key = try await AdminAPITests.adminKey(stack)
            #expect(try await console.signIn(key).status == .seeOther)
            // __Host-: only this host may set it, Secure, for every path.
            let cookie = console.lastSetCookies.first { $0.hasPrefix("__Host-latchkey_console=") } ?? ""
            // Attributes in any order (Hummingbird keeps them in a dictionary).
            let attributes = Set(cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(attributes.isSuperset(of: ["Secure", "Path=/", "HttpOnly", "SameSite=Strict"]), "\(cookie)")
            #expect(try await console.get("/admin").status == .ok)
            // Over https the unprefixed name is no session: another subdomain could have set it.
            let sealed = try #require(console.cookies["__Host-latchkey_console"])
            console.setCookie("__Host-latchkey_console", nil)
            console.setCookie("latchkey_console", sealed)
            #expect(try await console.get("/admin").status == .seeOther)
        }
    }

    @Test("every template escapes every value it shows, scalar by scalar")
    func templates() throws {
        let renderer = try ConsoleRenderer()
        let hostile = "\u{D4E}<form action=/x>\u{301}\"\u{301}'><b>"
        for (name, text) in ConsoleTemplates.all where name != ConsoleTemplates.layoutName {
            // Every value the template shows, set to markup; sections see it as a true value.
            let names = text.matches(of: /\{\{([a-zA-Z.]+)\}\}/).map { String($0.output.1) }
            #expect(!names.isEmpty, "\(name)")
            let view = Dictionary(names.map { ($0, hostile) }, uniquingKeysWith: { first, _ in first })
            let html = renderer.html(name, title: hostile, view: view, chrome: nil)
            #expect(!Self.bytes(html, contain: "<form action=/x>") && !Self.bytes(html, contain: "<b>"), "\(name)")
            let quoteInCluster = "\"\u{301}"  // outside #expect: its expansion re-lexes the literal
            #expect(!Self.bytes(html, contain: quoteInCluster), "\(name)")
        }
    }

    @Test("a wrong, revoked or missing key, or a form from elsewhere, signs nobody in")
    func refusedSignIns() async throws {
        try await Stack.run { stack in
            let key = try await AdminAPITests.adminKey(stack)
            let revoked = try await AdminAPITests.adminKey(stack, name: "old")
            _ = try await stack.store.revokeAdminKey(
                id: try #require(AdminKeySecret(revoked)).id, now: stack.clock.now, by: .commandLine)
            for wrong in ["", "lka_nonsense", AdminKeySecret.generate().text, revoked] {
                let console = ConsoleClient(stack)
                let answer = try await console.signIn(wrong)
                #expect(answer.status == .unauthorized && answer.text.contains("not valid"), "\(wrong)")
                #expect(console.cookies["latchkey_console"] == nil)
            }
            // The form's token must be the one its cookie holds.
            let console = ConsoleClient(stack)
            _ = try await console.get("/admin/sign-in")
            let forged = try await console.post("/admin/sign-in", ["csrf": "forged", "key": key])
            #expect(forged.status == .forbidden && console.cookies["latchkey_console"] == nil)
            // A page of another site posting the key (a login CSRF).
            let page = try await console.get("/admin/sign-in")
            let foreign = try await console.post(
                "/admin/sign-in", ["csrf": try ConsoleClient.formToken(page.text), "key": key],
                headers: [.init("Origin")!: "https://evil.example"])
            #expect(foreign.status == .forbidden && console.cookies["latchkey_console"] == nil)
            #expect(try await console.signIn(key).status == .seeOther)
        }
    }

    @Test("wrong keys at the sign-in form are limited per address, and the right key still gets in")
    func signInLimit() async throws {
        try await Stack.run { stack in
            let key = try await AdminAPITests.adminKey(stack)
            let limit = try #require(stack.configuration.limits.adminPerAddress?.limit)
            let console = ConsoleClient(stack)
            for _ in 0..<limit {
                #expect(try await console.signIn("lka_nonsense").status == .unauthorized)
            }
            let limited = try await console.signIn("lka_nonsense")
            #expect(limited.status == .tooManyRequests && limited.headers[.retryAfter] != nil)
            // What the limit bounds is the cost of refusals, not guessing (a key has 256 random
            // bits): the operator behind the same address is never locked out.
            #expect(try await console.signIn(key).status == .seeOther)
            #expect(console.cookies["latchkey_console"] != nil)
        }
    }

    @Test("a change without the form token, or from another site, changes nothing")
    func forgedForms() async throws {
        try await Stack.run { stack in
            let (userID, refresh) = try await Self.person(stack)
            let console = ConsoleClient(stack)
            try await console.signIn(try await AdminAPITests.adminKey(stack))
            let token = try await console.formToken()
            let disable = "/admin/users/\(userID)/disable"
            for (fields, headers) in [
                ([:], nil), (["csrf": "x" + token.dropFirst()], nil),
                (["csrf": token], [HTTPField.Name("Origin")!: "https://evil.example"]),
                (["csrf": token], [HTTPField.Name("Origin")!: "null"]),
                (["csrf": token], [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"]),
                (["csrf": token], HTTPFields()),  // neither Origin nor Sec-Fetch-Site: no browser's form
            ] as [([String: String], HTTPFields?)] {
                let answer = try await console.post(disable, fields, headers: headers)
                #expect(answer.status == .forbidden, "\(fields) \(String(describing: headers))")
            }
            #expect(try await stack.store.user(id: userID)?.disabled == false)
            #expect(try await SessionTests.refresh(stack, refresh).status == .ok)
            // Each refusal is on record under the key.
            let refused = try await stack.store.auditEvents(userID: userID, limit: 20).filter {
                $0.event.type == .adminCall && $0.event.detail["status"] == 403
            }
            #expect(refused.count == 6)
            // With its token, from the console: done.
            let done = try await console.post(disable, ["csrf": token])
            #expect(done.status == .seeOther && done.headers[.location] == "/admin/users/\(userID)?done=disabled")
            #expect(try await stack.store.user(id: userID)?.disabled == true)
        }
    }

    @Test("a session ends when its key is revoked, when left idle 30 minutes, and after 12 hours however busy")
    func sessionLifetime() async throws {
        try await Stack.run { stack in
            let key = try await AdminAPITests.adminKey(stack)
            let console = ConsoleClient(stack)
            try await console.signIn(key)
            stack.clock.advance(29 * 60)
            #expect(try await console.get("/admin").status == .ok)
            stack.clock.advance(29 * 60)
            #expect(try await console.get("/admin").status == .ok, "each page renews the idle time")
            stack.clock.advance(31 * 60)
            #expect(try await console.get("/admin").status == .seeOther, "idle")

            try await console.signIn(key)
            for _ in 0..<(12 * 3) {
                stack.clock.advance(20 * 60)
                if try await console.get("/admin").status != .ok { break }
            }
            #expect(try await console.get("/admin").status == .seeOther, "twelve hours at most")

            try await console.signIn(key)
            #expect(try await console.get("/admin").status == .ok)
            _ = try await stack.store.revokeAdminKey(
                id: try #require(AdminKeySecret(key)).id, now: stack.clock.now, by: .commandLine)
            #expect(try await console.get("/admin").status == .seeOther, "revoked")
        }
    }

    @Test("an altered or foreign cookie is no session")
    func alteredCookie() async throws {
        try await Stack.run { stack in
            let console = ConsoleClient(stack)
            try await console.signIn(try await AdminAPITests.adminKey(stack))
            let sealed = try #require(console.cookies["latchkey_console"])
            var bytes = Array(sealed.utf8)
            bytes[bytes.count / 2] = bytes[bytes.count / 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            for value in [String(decoding: bytes, as: UTF8.self), "", "x", String(repeating: "A", count: 5000)] {
                console.setCookie("latchkey_console", value)
                #expect(try await console.get("/admin").status == .seeOther)
            }
        }
    }

    @Test("what people and providers wrote is shown as text, never as markup")
    func escaping() async throws {
        try await Stack.run { stack in
            let (userID, _) = try await Self.person(stack)
            let hostile = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>"
            _ = try await stack.store.updateProperties(
                userID: userID, properties: ["nickname": .string(hostile), "email": .string(hostile)],
                now: stack.clock.now)
            let console = ConsoleClient(stack)
            try await console.signIn(try await AdminAPITests.adminKey(stack))
            for path in ["/admin/users", "/admin/users/\(userID)", "/admin/users?query=\(userID)"] {
                let page = try await console.get(path).text
                #expect(!page.contains("<script>") && !page.contains("<img"), "\(path)")
            }
            let page = try await console.get("/admin/users/\(userID)").text
            #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            // A search for markup is shown back escaped.
            let search = try await console.get("/admin/users?query=%22%3E%3Cb%3E").text
            #expect(search.contains("value=\"&quot;&gt;&lt;b&gt;\"") && !search.contains("<b>"))
        }
    }

    /// Whether `text`'s bytes hold `part`'s: the browser's parser reads bytes (scalars), where
    /// Swift's `contains` compares grapheme clusters and would miss `<` inside one.
    static func bytes(_ text: String, contain part: String) -> Bool {
        let haystack = Array(text.utf8)
        let needle = Array(part.utf8)
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains {
            haystack[$0..<($0 + needle.count)].elementsEqual(needle)
        }
    }

    @Test(
        "a quote or a bracket inside a grapheme cluster is escaped too (swift-mustache's own escaper lets it through)")
    func clusters() async throws {
        try await Stack.run { stack in
            let (userID, _) = try await Self.person(stack)
            let tag = "\u{D4E}<form action=/admin/keys/rotate method=post>\u{301}"
            let attribute = "a\"\u{301} autofocus"
            _ = try await stack.store.updateProperties(
                userID: userID, properties: ["email": .string(tag), "nickname": .string(attribute)],
                now: stack.clock.now)
            let console = ConsoleClient(stack)
            try await console.signIn(try await AdminAPITests.adminKey(stack))
            for path in ["/admin/users", "/admin/users/\(userID)"] {
                let page = try await console.get(path).text
                #expect(!Self.bytes(page, contain: "<form action=/admin/keys/rotate"), "\(path)")
                #expect(!Self.bytes(page, contain: attribute), "\(path)")
                #expect(Self.bytes(page, contain: "&lt;form action=/admin/keys/rotate"), "\(path)")
            }
            let search = try await console.get(
                "/admin/users?query=" + (attribute.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            ).text
            let (raw, escaped) = (String(attribute.dropFirst()), "&quot;\u{301} autofocus")
            #expect(!Self.bytes(search, contain: raw) && Self.bytes(search, contain: escaped))
        }
        let cases = [
            ("\"\u{301}", "&quot;\u{301}"), ("\u{D4E}<", "\u{D4E}&lt;"), ("<a href='x'>", "&lt;a href=&#39;x&#39;&gt;"),
        ]
        for (raw, escaped) in cases {
            let matches = Array(HTML.escape(raw).utf8) == Array(escaped.utf8)
            #expect(matches, "\(Array(raw.unicodeScalars))")
        }
    }

    @Test("each change does what the admin API does, and is audited naming the key")
    func changes() async throws {
        try await Stack.run { stack in
            let key = try await AdminAPITests.adminKey(stack, name: "ops")
            let keyID = try #require(AdminKeySecret(key)).id
            let (userID, refresh) = try await Self.person(stack)
            let console = ConsoleClient(stack)
            try await console.signIn(key)
            let token = try await console.formToken()
            let user = "/admin/users/\(userID)"

            // Properties: the box holds every property; one left out is removed.
            func version() async throws -> String {
                let page = try await console.get(user).text
                return String(try #require(page.firstMatch(of: /name="version" value="([0-9a-f]+)"/)).output.1)
            }
            let opened = try await version()
            let saved = try await console.post(
                "\(user)/properties",
                ["csrf": token, "version": opened, "properties": #"{"tier": "gold", "name": "Alice"}"#])
            #expect(saved.status == .seeOther)
            let properties = try #require(try await stack.store.user(id: userID)?.properties)
            #expect(properties["tier"] == "gold" && properties["email"] == nil && properties["name"] == "Alice")
            let bad = try await console.post(
                "\(user)/properties", ["csrf": token, "version": try await version(), "properties": "[1]"])
            #expect(bad.status == .badRequest && bad.text.contains("one JSON object"))
            // A save from a page opened before another change is refused, and the change kept.
            let stale = try await version()
            _ = try await stack.store.updateProperties(
                userID: userID, properties: ["country": "DE"], now: stack.clock.now)
            let refused = try await console.post(
                "\(user)/properties", ["csrf": token, "version": stale, "properties": #"{"tier": "gold"}"#])
            #expect(refused.status == .conflict && refused.text.contains("changed since this page was opened"))
            #expect(try await stack.store.user(id: userID)?.properties["country"] == "DE")

            // One session ended: the app's next refresh fails.
            let sessionID = try #require(
                try await stack.store.sessions(userID: userID, now: stack.clock.now, limit: 10).first?.id)
            let page = try await console.get(user).text
            #expect(page.contains("\(user)/sessions/\(sessionID)/end"))
            #expect(try await console.post("\(user)/sessions/\(sessionID)/end", ["csrf": token]).status == .seeOther)
            #expect(try await SessionTests.refresh(stack, refresh).errorCode == "refresh_token_invalid")
            #expect(try await console.get("\(user)?done=session_ended").text.contains("Session ended."))
            // An unknown session: a refusal page, nothing else.
            let unknown = try await console.post("\(user)/sessions/nope/end", ["csrf": token])
            #expect(unknown.status == .notFound && unknown.text.contains("no active session"))

            // The last way in is never unlinked.
            let subject = try await FacebookCallbackTests.subject(stack, userID: userID)
            let unlink = try await console.post("\(user)/identities/facebook/\(subject)/unlink", ["csrf": token])
            #expect(unlink.status == .conflict && unlink.text.contains("only way to sign in"))

            let calls = try await stack.store.auditEvents(userID: userID, limit: 50).filter {
                $0.event.type == .adminCall
            }
            let routes = calls.compactMap { $0.event.detail["route"]?.stringValue }
            #expect(routes.contains("/admin/users/{id}/properties") && routes.contains("/admin/users/{id}"))
            #expect(routes.contains("/admin/users/{id}/sessions/{sessionId}/end"))
            #expect(calls.allSatisfy { $0.event.detail["name"] == "ops" })
            // Delete asks for the box to be ticked.
            #expect(try await console.post("\(user)/delete", ["csrf": token]).status == .badRequest)
            #expect(try await stack.store.user(id: userID) != nil)
            let deleted = try await console.post("\(user)/delete", ["csrf": token, "confirm": "yes"])
            #expect(deleted.headers[.location] == "/admin/users?done=deleted")
            #expect(try await stack.store.user(id: userID) == nil)

            let tombstone = try await stack.store.auditEvents(userID: userID, limit: 50).first {
                $0.event.type == .userDeleted
            }
            #expect(tombstone?.event.detail["admin_key"]?.stringValue == keyID)
        }
    }

    @Test("the dashboard draws this node's sign-ins and errors per hour")
    func dashboard() async throws {
        try await Stack.run { stack in
            _ = try await Self.person(stack, "alice")
            _ = try await Self.person(stack, "bob")
            let code = try #require(try await stack.signIn(["accessToken": "not-a-token"]).errorCode)
            let console = ConsoleClient(stack)
            try await console.signIn(try await AdminAPITests.adminKey(stack))
            let page = try await console.get("/admin").text
            let hour = String(format: "%02d:00 UTC", Calendar.utc.component(.hour, from: stack.clock.now))
            #expect(page.contains("<span class=\"swatch c0\"></span>facebook · classic"))
            #expect(page.contains("<title>\(hour), facebook · classic: 2 sign-ins</title>"), "\(page)")
            #expect(page.contains("<span class=\"value\">2</span><span class=\"label\">active sessions</span>"))
            #expect(page.contains("<title>\(hour), \(code): 1 errors</title>"), "\(page)")
        }
    }
}

extension Calendar {
    /// The Gregorian calendar in UTC.
    static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }
}
