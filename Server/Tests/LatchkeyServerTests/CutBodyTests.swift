import Foundation
import LatchkeyServer
import Testing

/// A body that ends short of its `Content-Length` because the client half-closed: the client's
/// fault, answered 400 `malformed_request` (or the connection closed), never 500, and nothing an
/// operator is paged for.
@Suite("Bodies cut short")
struct CutBodyTests {
    @Test(
        "a cut body then a half-close is 400 malformed_request or a close, never 500",
        arguments: [
            ("/v1/auth/facebook", "application/json", #"{"accessToken":"EA"#),
            ("/v1/auth/nonce", "application/json", "{"),
            ("/v1/oauth/token", "application/x-www-form-urlencoded", "grant_type=refresh_tok"),
        ])
    func cutBody(path: String, contentType: String, start: String) async throws {
        try await Stack.run { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            let connection = try #require(RawConnection(port: port))
            defer { connection.close() }
            connection.write(
                "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: \(contentType)\r\nContent-Length: 200\r\n\r\n\(start)"
            )
            connection.endWriting()
            let answer = await connection.received(within: 10_000)
            #expect(
                answer.isEmpty || (answer.hasPrefix("HTTP/1.1 400") && answer.contains("malformed_request")),
                "\(path): \(answer)")
            let loud = stack.logs.all.filter { $0.hasPrefix("error ") || $0.hasPrefix("critical ") }
            #expect(loud.isEmpty, "\(path): \(loud)")
        }
    }
}
