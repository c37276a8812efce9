import HTTPTypes
import Hummingbird
import NIOCore

/// The few HTML pages the server itself serves to people (Easy Login's error page, a data-deletion
/// request's status page): never cached, never framed, never indexed, loading nothing but their
/// own inline style, and leaking no URL through `Referer`.
enum HTMLPage {
    /// `html` with those headers; the console passes its own policy (a stylesheet, forms to
    /// itself) and referrer policy (its forms must carry their origin).
    static func response(
        status: HTTPResponse.Status, html: String,
        contentSecurityPolicy: String = "default-src 'none'; style-src 'unsafe-inline'",
        referrerPolicy: String = "no-referrer"
    ) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.contentSecurityPolicy] = contentSecurityPolicy
        headers[.init("X-Frame-Options")!] = "DENY"
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        headers[.init("Referrer-Policy")!] = referrerPolicy
        headers[.init("X-Robots-Tag")!] = "noindex"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
