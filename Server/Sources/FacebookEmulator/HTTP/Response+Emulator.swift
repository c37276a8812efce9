import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import NIOCore

extension Response {
    /// A JSON response, as Graph sends them (`text/javascript` historically; `application/json` now).
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        let data = value.encoded()
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=UTF-8"
        headers[.cacheControl] = "private, no-cache, no-store, must-revalidate"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A Graph error in Facebook's envelope, with the `WWW-Authenticate` challenge Graph sends
    /// beside `OAuthException`s.
    static func graphError(_ error: GraphError, traceID: String) -> Response {
        var response = Response.json(error.envelope(traceID: traceID), status: error.status)
        if let challenge = error.authenticateChallenge { response.headers[.wwwAuthenticate] = challenge }
        return response
    }

    /// A `302 Found` to `location`.
    static func redirect(to location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        headers[.contentLength] = "0"
        return Response(status: .found, headers: headers)
    }

    /// An HTML page.
    static func html(_ page: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; img-src data: http: https:"
        headers[.init("X-Frame-Options")!] = "DENY"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    /// A body of any type, e.g. the generated profile picture.
    static func bytes(_ text: String, contentType: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
