import Foundation
import LatchkeyAPI
import LatchkeyShared

/// The server's JSON API over a `LatchkeyTransport`, mapping every failure to `LatchkeyError`.
struct JSONTransport: Sendable {
    let baseURL: URL
    let transport: any LatchkeyTransport

    func send<Response: Decodable>(
        _ method: String, _ path: String, json: JSONValue? = nil, form: [(String, String)]? = nil,
        bearer: String? = nil, as type: Response.Type
    ) async throws(LatchkeyError) -> Response {
        let data = try await sendRaw(method, path, json: json, form: form, bearer: bearer)
        do {
            return try JSONDecoder().decode(Response.self, from: data)
        } catch {
            throw LatchkeyError.sdk(.invalidResponse, "The server's answer could not be read.", underlying: error)
        }
    }

    /// The URL of `path`, which may end in a query its caller encoded (`v1/users/me/events?limit=20`):
    /// appending it as a path component would escape the `?`.
    func url(for path: String) -> URL {
        let parts = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let url = baseURL.appendingPathComponent(String(parts[0]))
        guard parts.count == 2, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url
        }
        components.percentEncodedQuery = String(parts[1])
        return components.url ?? url
    }

    @discardableResult
    func sendRaw(
        _ method: String, _ path: String, json: JSONValue? = nil, form: [(String, String)]? = nil, bearer: String? = nil
    ) async throws(LatchkeyError) -> Data {
        var request = LatchkeyHTTPRequest(method: method, url: url(for: path))
        request.headers.append(("Accept", "application/json"))
        if let json {
            request.headers.append(("Content-Type", "application/json"))
            request.body = json.encoded()
        } else if let form {
            request.headers.append(("Content-Type", "application/x-www-form-urlencoded"))
            request.body = Data(FormEncoding.encode(form).utf8)
        }
        if let bearer { request.headers.append(("Authorization", "Bearer \(bearer)")) }
        let http: LatchkeyHTTPResponse
        do {
            http = try await transport.send(request)
        } catch {
            throw LatchkeyError.wrapping(
                error, as: .networkUnavailable, "The server could not be reached: \(error.localizedDescription)")
        }
        let data = http.body
        guard (200..<300).contains(http.status) else {
            if let body = try? JSONDecoder().decode(ErrorBody.self, from: data) {
                throw LatchkeyError(
                    code: body.error.code, message: body.error.message, httpStatus: http.status, underlying: nil,
                    linkTicket: body.error.linkTicket, challenge: body.error.secondFactorChallenge, resolver: nil)
            }
            // The token endpoint answers in RFC 6749's shape, with Latchkey's code alongside.
            if let body = try? JSONDecoder().decode(OAuthErrorBody.self, from: data) {
                throw LatchkeyError(
                    code: body.errorCode, message: body.errorDescription, httpStatus: http.status,
                    linkTicket: body.linkTicket)
            }
            throw LatchkeyError(
                code: http.status >= 500 ? .internalError : .invalidResponse,
                message: "The server answered HTTP \(http.status).", httpStatus: http.status)
        }
        return data
    }
}
