import Foundation

/// One HTTP request, as the SDK makes them: small JSON or form bodies, a bounded wait.
public struct LatchkeyHTTPRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The full URL.
    public var url: URL
    /// Header fields, in order.
    public var headers: [(name: String, value: String)]
    /// The body, if any.
    public var body: Data?
    /// How long to wait for the whole exchange.
    public var timeout: TimeInterval

    /// Creates a request.
    public init(
        method: String, url: URL, headers: [(name: String, value: String)] = [], body: Data? = nil,
        timeout: TimeInterval = 30
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// An HTTP answer: status and body.
public struct LatchkeyHTTPResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The body.
    public var body: Data

    /// Creates a response.
    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// How the SDK talks HTTP. `Latchkey` provides `URLSessionTransport` (the default in apps);
/// anything else works too, e.g. a server-side client in a command-line tool.
///
/// Why a protocol: `LatchkeyCore` itself never links a networking library, so a program that
/// already has an HTTP client (the `latchkey` CLI uses AsyncHTTPClient) does not load
/// FoundationNetworking and libcurl just for the SDK (6 MB of resident memory on Linux).
public protocol LatchkeyTransport: Sendable {
    /// Sends `request`; throws only when no HTTP answer arrived (any status is an answer).
    func send(_ request: LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse
}
