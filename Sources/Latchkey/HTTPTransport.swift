import Foundation
import LatchkeyAPI

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// JSON over URLSession, mapping every failure to `LatchkeyError`.
struct HTTPTransport: Sendable {
    let baseURL: URL
    let session: URLSession

    func send<Response: Decodable>(
        _ method: String, _ path: String, json: JSONValue? = nil, form: [(String, String)]? = nil,
        bearer: String? = nil, as type: Response.Type
    ) async throws(LatchkeyError) -> Response {
        let data = try await sendRaw(method, path, json: json, form: form, bearer: bearer)
        do {
            return try JSONDecoder().decode(Response.self, from: data)
        } catch {
            throw LatchkeyError.sdk("invalid_response", "The server's answer could not be read.")
        }
    }

    @discardableResult
    func sendRaw(
        _ method: String, _ path: String, json: JSONValue? = nil, form: [(String, String)]? = nil, bearer: String? = nil
    ) async throws(LatchkeyError) -> Data {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.timeoutInterval = 30
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = json.encoded()
        } else if let form {
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(FormEncoding.encode(form).utf8)
        }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw LatchkeyError.sdk(
                "network_unavailable", "The server could not be reached: \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw LatchkeyError.sdk("invalid_response", "The server's answer was not HTTP.")
        }
        guard (200..<300).contains(http.statusCode) else {
            if let body = try? JSONDecoder().decode(ErrorBody.self, from: data) {
                throw LatchkeyError(
                    code: body.error.code.rawValue, message: body.error.message, httpStatus: http.statusCode)
            }
            // The token endpoint answers in RFC 6749's shape, with Latchkey's code alongside.
            if let body = try? JSONDecoder().decode(OAuthErrorBody.self, from: data) {
                throw LatchkeyError(
                    code: body.errorCode.rawValue, message: body.errorDescription, httpStatus: http.statusCode)
            }
            throw LatchkeyError(
                code: http.statusCode >= 500 ? "internal_error" : "invalid_response",
                message: "The server answered HTTP \(http.statusCode).", httpStatus: http.statusCode)
        }
        return data
    }
}
