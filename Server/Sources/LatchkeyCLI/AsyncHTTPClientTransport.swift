import AsyncHTTPClient
import Foundation
import LatchkeyCore
import LatchkeyServer
import NIOCore
import NIOHTTP1

/// The SDK's HTTP for `latchkey login`: AsyncHTTPClient, which the binary has anyway for the
/// server's Facebook calls. The SDK's default `URLSessionTransport` would load FoundationNetworking
/// and libcurl into every `latchkey serve` (6 MB of idle RSS, docs/performance.md). The request's
/// timeout bounds the whole exchange, as it does for the server's own calls (`BoundedExchange`).
struct AsyncHTTPClientTransport: LatchkeyTransport {
    let client: HTTPClient

    func send(_ request: LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse {
        var outgoing = try HTTPClient.Request(
            url: request.url.absoluteString, method: HTTPMethod(rawValue: request.method))
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(body) }
        let (status, _, body) = try await BoundedExchange(client: client, timeout: request.timeout).send(outgoing)
        return LatchkeyHTTPResponse(status: status, body: Data(body.readableBytesView))
    }
}
