import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyShared
import NIOCore

/// What the fake app backend received: each callback's path and `signed_request`.
actor BackendLog {
    private(set) var callbacks: [(path: String, signedRequest: String)] = []
    func record(_ path: String, _ signedRequest: String) { callbacks.append((path, signedRequest)) }
}

/// An app backend for the scenarios, on a free loopback port:
///
/// - `POST /deauthorize` records the callback and answers `{}`;
/// - `POST /deletion/{page}` answers Facebook's shape pointing at `/status/{page}` on this host;
/// - `POST /deletion-without-code` answers a `url` but no `confirmation_code`;
/// - `GET /status/ok` is a small HTML page, `/status/moved` a 302 elsewhere, `/status/big` 10,000
///   bytes of HTML.
enum AppBackend {
    static func run(_ body: @escaping @Sendable (_ base: String, BackendLog) async throws -> Void) async throws {
        let log = BackendLog()
        let router = Router()
        router.post("/deauthorize") { request, _ -> Response in
            await log.record("/deauthorize", try await signedRequest(request))
            return json("{}")
        }
        router.post("/deletion/{page}") { request, context -> Response in
            await log.record(request.uri.path, try await signedRequest(request))
            let page = context.parameters.get("page") ?? "ok"
            let host = request.head.authority ?? "127.0.0.1"
            return json(#"{"url":"http://\#(host)/status/\#(page)","confirmation_code":"code-\#(page)"}"#)
        }
        router.post("/deletion-without-code") { request, _ -> Response in
            await log.record(request.uri.path, try await signedRequest(request))
            return json(#"{"url":"http://127.0.0.1/status/ok"}"#)
        }
        router.get("/status/ok") { _, _ in html("<html><body>In progress</body></html>") }
        router.get("/status/big") { _, _ in html("<html>" + String(repeating: "x", count: 10_000)) }
        router.get("/status/moved") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.location] = "http://127.0.0.1:1/elsewhere"
            return Response(status: .found, headers: headers)
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            try await body("http://127.0.0.1:\(client.port ?? 0)", log)
        }
    }

    private static func signedRequest(_ request: Request) async throws -> String {
        var request = request
        let form = FormEncoding.decode(String(buffer: try await request.collectBody(upTo: 65_536)))
        return form["signed_request"] ?? ""
    }

    private static func json(_ text: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private static func html(_ text: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
