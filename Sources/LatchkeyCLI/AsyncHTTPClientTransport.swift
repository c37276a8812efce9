import AsyncHTTPClient
import Foundation
import LatchkeyCore
import NIOCore
import NIOHTTP1

/// The SDK's HTTP for `latchkey login`: AsyncHTTPClient, which the binary has anyway for the
/// server's Facebook calls. The SDK's default `URLSessionTransport` would load FoundationNetworking
/// and libcurl into every `latchkey serve` (6 MB of idle RSS, docs/performance.md).
struct AsyncHTTPClientTransport: LatchkeyTransport {
    /// Largest answer read; the server's answers are a few kilobytes.
    static let maximumBody = 1 << 20

    let client: HTTPClient

    func send(_ request: LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(outgoing, timeout: .milliseconds(Int64(request.timeout * 1000)))
        let body = try await response.body.collect(upTo: Self.maximumBody)
        return LatchkeyHTTPResponse(status: Int(response.status.code), body: Data(body.readableBytesView))
    }
}
