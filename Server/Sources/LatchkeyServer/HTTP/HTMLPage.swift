import HTTPTypes
import Hummingbird
import NIOCore

/// The few HTML pages the server itself serves to people (Easy Login's error page, a data-deletion
/// request's status page): never cached, never framed, never indexed, loading nothing but their
/// own inline style, and leaking no URL through `Referer`.
enum HTMLPage {
    /// `html` with those headers.
    static func response(status: HTTPResponse.Status, html: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'"
        headers[.init("X-Frame-Options")!] = "DENY"
        headers[.init("Referrer-Policy")!] = "no-referrer"
        headers[.init("X-Robots-Tag")!] = "noindex"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
