import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyShared
import Mustache
import NIOCore

/// Renders the console's pages: each page's Mustache template (`ConsoleTemplates`) inside the
/// layout, answered with headers that let the page load nothing but the console's stylesheet.
///
/// Every `{{value}}` is HTML-escaped (quotes included, so values are safe in attributes) by
/// `ScalarHTML`, not by Mustache's own HTML type; only the charts' SVG, which `DashboardCharts`
/// builds from escaped parts, and the page inside the layout are inserted raw (`{{{…}}}`).
struct ConsoleRenderer: Sendable {
    private let library: MustacheLibrary

    /// The content type every console template declares.
    static let contentType = "LATCHKEY_HTML"

    /// Parses every template once, at start.
    /// - Throws: a template's parse error (a bug here, caught by every console test).
    init() throws {
        // Registered under a name of our own in swift-mustache's table (it takes its lock).
        MustacheContentTypes.register(ScalarHTML(), named: Self.contentType)
        var library = MustacheLibrary()
        for (name, text) in ConsoleTemplates.all {
            try library.register("{{% CONTENT_TYPE: \(Self.contentType)}}" + text, named: name)
        }
        self.library = library
    }

    /// The layout around the page `template` rendered with `view`.
    func page(
        _ template: String, title: String, view: Any, chrome: ConsoleChrome?, status: HTTPResponse.Status = .ok
    ) -> Response {
        Self.response(status: status, html: html(template, title: title, view: view, chrome: chrome))
    }

    /// The page's HTML.
    func html(_ template: String, title: String, view: Any, chrome: ConsoleChrome?) -> String {
        let body = library.render(view, withTemplate: template) ?? ""
        return library.render(
            ConsoleLayout(title: title, body: body, chrome: chrome), withTemplate: ConsoleTemplates.layoutName) ?? ""
    }

    /// `html` with the console's headers: never cached, framed or indexed, loading only
    /// `/admin/console.css`, posting forms only to itself, naming itself to no other site.
    static func response(status: HTTPResponse.Status, html: String) -> Response {
        // Not `no-referrer`: under it a browser sends `Origin: null` with the console's own forms,
        // and the origin check must see the console's origin. Nothing leaves for another site.
        HTMLPage.response(
            status: status, html: html, contentSecurityPolicy: contentSecurityPolicy, referrerPolicy: "same-origin")
    }

    /// No script at all, styles from the console's own file, forms to the console only.
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}

/// HTML escaping scalar by scalar (`HTML.escape`). swift-mustache 2.1.1's HTML type compares
/// `Character`s: a quote followed by a combining mark is one character equal to no quote, and
/// passes unescaped, so a person's display name could close an attribute or open a tag.
struct ScalarHTML: MustacheContentType {
    func escapeText(_ text: String) -> String { HTML.escape(text) }
}

/// What the layout shows around a page.
struct ConsoleLayout {
    let title: String
    /// The page, rendered (escaped where it needed to be).
    let body: String
    /// The navigation and the signed-in key; `nil` on the sign-in page.
    let chrome: ConsoleChrome?
}

/// The navigation bar's content for a signed-in operator. Stored flags, not computed ones:
/// Mustache reads values through `Mirror`, which sees stored properties only.
struct ConsoleChrome {
    /// The console's sections, one per navigation link.
    enum Section { case dashboard, users, deletions, keys, adminKeys, none }

    /// The admin key's name, shown as who is signed in.
    let keyName: String
    /// The form token, for the sign-out form.
    let formToken: String
    let dashboard: Bool
    let users: Bool
    let deletions: Bool
    let keys: Bool
    let adminKeys: Bool

    init(keyName: String, formToken: String, section: Section) {
        self.keyName = keyName
        self.formToken = formToken
        dashboard = section == .dashboard
        users = section == .users
        deletions = section == .deletions
        keys = section == .keys
        adminKeys = section == .adminKeys
    }
}
