import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import LatchkeyShared
import NIOCore

/// The two answers the browser side of Easy Login gives: a redirect (to Facebook or to the app),
/// or, when no redirect target can be trusted, a small error page.
enum EasyLoginResponse {
    /// `302` to `base` with `pairs` added to its query. The URL carries a code or state, so it must
    /// not be cached or leaked through `Referer`.
    static func redirect(_ base: String, _ pairs: [(String, String)]) -> Response {
        let separator = base.contains("?") ? "&" : "?"
        var headers = HTTPFields()
        headers[.location] = base + separator + FormEncoding.encode(pairs)
        headers[.cacheControl] = "no-store"
        headers[.init("Referrer-Policy")!] = "no-referrer"
        headers[.contentLength] = "0"
        return Response(status: .found, headers: headers)
    }

    /// An error page: RFC 6749 §4.1.2.1 forbids redirecting to an unverified redirect URI, so the
    /// person reads what went wrong here instead.
    static func page(
        status: HTTPResponse.Status = .badRequest, title: String, message: String
    ) -> Response {
        let html = """
            <!DOCTYPE html><html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1"><title>\(HTML.escape(title))</title>\
            <style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}\
            h1{font-size:1.3rem}</style></head><body><h1>\(HTML.escape(title))</h1><p>\(HTML.escape(message))</p>\
            </body></html>
            """
        return HTMLPage.response(status: status, html: html)
    }
}

/// Query parameters of a browser request, refusing repeats (RFC 6749 §3.1: a parameter appears at
/// most once, so two `redirect_uri`s cannot disagree).
struct QueryParameters: Sendable {
    let values: [String: String]
    let repeated: [String]

    init(_ query: String?) {
        var values: [String: String] = [:]
        var repeated: [String] = []
        for (key, value) in FormEncoding.pairs(query ?? "") {
            if values[key] != nil { repeated.append(key) }
            values[key] = value
        }
        self.values = values
        self.repeated = repeated
    }

    /// A non-empty value.
    subscript(_ name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }
}
