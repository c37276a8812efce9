import Foundation
import HTTPTypes
import LatchkeyAPI
import Logging
import Synchronization
import Testing

@testable import LatchkeyServer

/// Logs an operator's pipeline can use: `LATCHKEY_LOG_FORMAT=json` lines, a request id on every
/// line a request causes and in its answer, and the optional access log.
@Suite("Request logs")
struct RequestLogTests {
    @Test("json lines: one object per line, dotted metadata keys as members, the request id while a request runs")
    func jsonLines() throws {
        let lines = Mutex<[String]>([])
        let sink = JSONLogHandler.LineSink { line in lines.withLock { $0.append(line) } }
        var logger = Logger(label: "latchkey") { label in
            JSONLogHandler(label: label, sink: sink, metadataProvider: RequestLog.metadataProvider)
        }
        logger[metadataKey: "latchkey.node"] = "n1"
        logger.info("latchkey.keys.sealed", metadata: ["latchkey.keys.count": "3", "latchkey.list": ["a", "b"]])
        RequestLog.$requestID.withValue("req-1") {
            logger.warning("latchkey.limits.refused", metadata: ["latchkey.limit": "\"quoted\"\nnewline"])
        }
        logger.debug("below the level")
        let written = lines.withLock { $0 }
        #expect(
            written.count == 2 && written.allSatisfy { $0.hasSuffix("\n") && $0.dropLast().allSatisfy { $0 != "\n" } })
        let first = try JSONValue.decode(Data(written[0].utf8))
        #expect(first["message"] == "latchkey.keys.sealed" && first["level"] == "info" && first["logger"] == "latchkey")
        #expect(first["latchkey.keys.count"] == "3" && first["latchkey.list"] == ["a", "b"])
        #expect(first["latchkey.node"] == "n1" && first["latchkey.request.id"] == nil)
        #expect(first["time"]?.stringValue?.hasSuffix("Z") == true)
        let second = try JSONValue.decode(Data(written[1].utf8))
        #expect(second["latchkey.request.id"] == "req-1" && second["latchkey.limit"] == "\"quoted\"\nnewline")
    }

    @Test("every answer carries X-Request-Id; the access log names the route template, never the path's values")
    func accessLog() async throws {
        try await Stack.run({ $0.operations.accessLog = true }) { stack in
            let unauthorized = try await stack.get("/v1/users/me/sessions", bearer: "nope")
            let id = try #require(unauthorized.headers[RequestLog.header])
            #expect(id.count == 16)
            let missing = try await stack.get("/v1/nothing/secret-looking-value?code=abc")
            let other = try #require(missing.headers[RequestLog.header])
            #expect(other != id)
            let lines = stack.logs.all.filter { $0.contains("latchkey.http.request") }
            let first = try #require(lines.first { $0.contains(id) })
            #expect(
                first.contains("latchkey.http.route=/v1/users/me/sessions")
                    && first.contains("latchkey.http.status=401"))
            #expect(first.contains("latchkey.http.method=GET") && first.contains("latchkey.client.address=127.0.0.1"))
            let second = try #require(lines.first { $0.contains(other) })
            #expect(
                second.contains("latchkey.http.route=NotFound") && second.contains("latchkey.http.status=404"),
                "\(second)")
            #expect(!stack.logs.all.contains { $0.contains("secret-looking-value") || $0.contains("code=abc") })
        }
    }

    @Test("without LATCHKEY_ACCESS_LOG no line is written per request")
    func noAccessLog() async throws {
        try await Stack.run { stack in
            _ = try await stack.get("/health")
            #expect(!stack.logs.all.contains { $0.contains("latchkey.http.request") })
        }
    }
}
