import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import Testing

/// Slow and idle clients: deadlines that bytes do not extend, and a cap on connections. Waits are
/// for the server's action (a close), bounded generously; no assertion depends on timing.
@Suite("Slow clients and open connections")
struct SlowClientTests {
    static let partialSignIn =
        "POST /v1/auth/facebook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"

    @Test("hundreds of slow connections held open while real sign-ins go through")
    func manySlowConnections() async throws {
        // Abuse limits off: every connection here comes from 127.0.0.1, and 300 sign-ins from one
        // address in a second is exactly what the per-address limit refuses (its own test).
        try await Stack.run({ $0.abuseLimits = .off }) { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            var held: [RawConnection] = []
            for _ in 0..<300 {
                let connection = try #require(RawConnection(port: port))
                connection.send(Self.partialSignIn)
                held.append(connection)
            }
            for user in ["alice", "bob", "carol", "dave"] {
                let response = try await stack.signIn(["accessToken": .string(try await stack.facebookToken(user))])
                #expect(response.status == .ok, "\(user)")
            }
            #expect(held.count == 300)
        }
    }

    @Test("a body trickled a byte at a time is cut at LATCHKEY_REQUEST_TIMEOUT, however often bytes come")
    func trickledBody() async throws {
        try await Stack.run({ $0.requestTimeout = 0.5 }) { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            let connection = try #require(RawConnection(port: port))
            connection.send(Self.partialSignIn)
            var closed = false
            // One byte every 100 ms for at most 20 s: far longer than the deadline, far shorter
            // than the idle timeout (75 s) that each byte used to reset.
            for _ in 0..<200 where !closed {
                closed = connection.closedByServer(within: 100) || !connection.send("a")
            }
            #expect(closed)
            #expect(stack.logs.all.contains { $0.contains("latchkey.connection.too_slow") })
        }
    }

    @Test("a head sent in pieces is cut at LATCHKEY_IDLE_TIMEOUT")
    func trickledHead() async throws {
        try await Stack.run({ $0.idleTimeout = 0.5 }) { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            let connection = try #require(RawConnection(port: port))
            var closed = false
            for _ in 0..<200 where !closed {
                closed = connection.closedByServer(within: 100) || !connection.send("X")
            }
            #expect(closed)
        }
    }

    @Test("connections beyond LATCHKEY_MAX_CONNECTIONS are closed at once, with one warning")
    func connectionCap() async throws {
        try await Stack.run({ $0.maximumConnections = 5 }) { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            let connections = (0..<10).compactMap { _ in RawConnection(port: port) }
            #expect(connections.count == 10)
            let refused = connections.filter { $0.closedByServer(within: 500) }.count
            #expect(refused >= 5)
            #expect(stack.logs.all.filter { $0.contains("latchkey.connections.limit_reached") }.count == 1)
        }
    }
}
