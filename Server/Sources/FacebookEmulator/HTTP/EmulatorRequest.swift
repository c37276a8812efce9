import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyAPI
import LatchkeyShared

/// A request as the emulator's endpoints see it: the path without its Graph version, and one
/// parameter map merged from the query string and a form body, as Graph accepts either.
struct EmulatorRequest: Sendable {
    let method: HTTPRequest.Method
    /// Path segments after dropping an optional `vNN.N` prefix.
    let segments: [String]
    /// Query parameters, overridden by form-body parameters.
    let parameters: [String: String]
    /// A JSON body, for the control API.
    let json: JSONValue?
    let headers: HTTPFields
    /// The path as sent (with its version prefix) and the raw query string, for the request log.
    let rawPath: String
    let rawQuery: String
    /// Where this emulator is reachable, for URLs it hands out.
    let baseURL: String
    /// Whether errors in this answer may carry subcodes; a fault with `send_subcode: false`
    /// clears it, and `debug_token` then leaves `data.error.subcode` out too.
    var sendsSubcodes = true

    /// `access_token` from the parameters or an `Authorization: Bearer`/`OAuth` header (§1).
    var accessToken: String? {
        if let token = parameters["access_token"], !token.isEmpty { return token }
        guard let authorization = headers[.authorization] else { return nil }
        // Schemes are case-insensitive (RFC 9110 §11.1).
        for scheme in ["bearer ", "oauth "] where authorization.lowercased().hasPrefix(scheme) {
            let token = authorization.dropFirst(scheme.count).trimmingCharacters(in: .whitespaces)
            return token.isEmpty ? nil : token
        }
        return nil
    }

    /// The value of a parameter, `nil` when absent or empty.
    subscript(_ name: String) -> String? {
        guard let value = parameters[name], !value.isEmpty else { return nil }
        return value
    }

    /// Reads and parses a Hummingbird request, collecting at most `maximumBodySize` bytes.
    static func read(_ request: Request, publicURL: String?, maximumBodySize: Int) async throws -> EmulatorRequest {
        var segments = request.uri.path.split(separator: "/").map(String.init)
        if let first = segments.first, isGraphVersion(first) { segments.removeFirst() }
        var parameters = FormEncoding.decode(request.uri.query ?? "")
        var json: JSONValue?
        var mutableRequest = request
        let body = try await mutableRequest.collectBody(upTo: maximumBodySize)
        if body.readableBytes > 0 {
            let contentType = request.headers[.contentType]?.lowercased() ?? ""
            let text = String(buffer: body)
            if contentType.hasPrefix("application/json") {
                json = try? JSONValue.decode(Data(text.utf8))
            } else if contentType.hasPrefix("application/x-www-form-urlencoded") || contentType.isEmpty {
                parameters.merge(FormEncoding.decode(text)) { _, body in body }
            }
        }
        let host = request.head.authority ?? "127.0.0.1"
        return EmulatorRequest(
            method: request.method, segments: segments, parameters: parameters, json: json, headers: request.headers,
            rawPath: request.uri.path, rawQuery: request.uri.query ?? "",
            baseURL: publicURL ?? "http://\(host)")
    }

    /// `v21.0`, `v2.3`, `v9`: the optional version prefix of Graph and dialog paths.
    static func isGraphVersion(_ segment: String) -> Bool {
        guard segment.hasPrefix("v"), segment.count > 1 else { return false }
        let rest = segment.dropFirst()
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count <= 2
            && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }
}
