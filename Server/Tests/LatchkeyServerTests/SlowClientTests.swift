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

    @Test("hundreds of slow connections held open while real sign-ins go through, then cut at the deadline")
    func manySlowConnections() async throws {
        // Abuse limits off: every connection here comes from 127.0.0.1, and 300 sign-ins from one
        // address in a second is exactly what the per-address limit refuses (its own test).
        try await TestLock.fileDescriptors.withLock {
            try await Stack.run({
                $0.limits = .off
                $0.http.maximumConnectionsPerAddress = 0  // 300 from one address: its own test
                $0.http.requestTimeout = 2
            }) { (stack: Stack) async throws in
                let port = try #require(stack.server.port)
                var held: [RawConnection] = []
                for _ in 0..<300 {
                    let connection = try #require(RawConnection(port: port))
                    connection.write(Self.partialSignIn)
                    held.append(connection)
                }
                for user in ["alice", "bob", "carol", "dave"] {
                    let response = try await stack.signIn(["accessToken": .string(try await stack.facebookToken(user))])
                    #expect(response.status == .ok, "\(user)")
                }
                // Every held connection is cut by the body deadline (each wait bounded).
                var cut = 0
                for connection in held.prefix(20) where await connection.closedByServer(within: 5_000) { cut += 1 }
                #expect(cut == 20)
                for connection in held { connection.close() }
            }
        }
    }

    @Test("a body trickled a byte at a time is cut at LATCHKEY_REQUEST_TIMEOUT, however often bytes come")
    func trickledBody() async throws {
        try await Stack.run({ $0.http.requestTimeout = 0.5 }) { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            let connection = try #require(RawConnection(port: port))
            defer { connection.close() }
            connection.write(Self.partialSignIn)
            #expect(await connection.trickledUntilClosed())
            #expect(stack.logs.all.contains { $0.contains("latchkey.connection.too_slow") })
        }
    }

    @Test("the head deadline waits while the server works: a slow Facebook does not cut a sign-in")
    func serverTimeIsNotTheClients() async throws {
        // Facebook takes 2.5 times the idle timeout. The timeout is 2 s rather than a fraction of
        // one: it is also the first head's deadline, and a full pass on two cores once held this
        // test's write back more than 0.3 s after its connect, so the server rightly cut it.
        try await Stack.run({ $0.http.idleTimeout = 2 }) { (stack: Stack) async throws in
            let token = try await stack.facebookToken()
            _ = try await stack.emulator(
                "/_emulator/faults", ["endpoint": "/debug_token", "latency_ms": 5_000, "count": 1])
            // A raw connection, as the test client's own would sit idle past 2 s before use.
            let port = try #require(stack.server.port)
            let connection = try #require(RawConnection(port: port))
            defer { connection.close() }
            let body = #"{"accessToken":""# + token + #""}"#
            connection.write(
                "POST /v1/auth/facebook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            )
            let answer = await connection.response(within: 30_000)
            #expect(answer?.hasPrefix("HTTP/1.1 200") == true)
        }
    }

    @Test("a head sent in pieces is cut at LATCHKEY_IDLE_TIMEOUT")
    func trickledHead() async throws {
        try await Stack.run({ $0.http.idleTimeout = 0.5 }) { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            let connection = try #require(RawConnection(port: port))
            defer { connection.close() }
            // A valid start, then a header value a byte at a time: the parser waits, only the
            // deadline can end it.
            connection.write("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            #expect(await connection.trickledUntilClosed())
            #expect(
                stack.logs.all.contains {
                    $0.contains("latchkey.connection.too_slow") && $0.contains("waiting_for=head")
                })
        }
    }

    @Test("a connection that sends no head is cut at LATCHKEY_FIRST_REQUEST_TIMEOUT; an idle keep-alive one is not")
    func firstHeadDeadline() async throws {
        try await Stack.run({
            $0.http.firstRequestTimeout = 0.3
            $0.http.idleTimeout = 60
        }) { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            let keptAlive = try #require(RawConnection(port: port))
            defer { keptAlive.close() }
            #expect(await ConnectionsPerAddressTests.isServed(keptAlive))
            // Two silent connections opened after it, one after the other, are each cut: the
            // kept-alive one has by then been idle for two first-head deadlines at least.
            for _ in 0..<2 {
                let silent = try #require(RawConnection(port: port))
                defer { silent.close() }
                #expect(await silent.closedByServer(within: 10_000))
            }
            #expect(await ConnectionsPerAddressTests.isServed(keptAlive))
            #expect(
                stack.logs.all.contains {
                    $0.contains("latchkey.connection.too_slow") && $0.contains("LATCHKEY_FIRST_REQUEST_TIMEOUT")
                })
        }
    }

    @Test("connections beyond LATCHKEY_MAX_CONNECTIONS are closed at once, with one warning")
    func connectionCap() async throws {
        try await Stack.run({ $0.http.maximumConnections = 5 }) { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            let connections = (0..<10).compactMap { _ in RawConnection(port: port) }
            #expect(connections.count == 10)
            var refused = 0
            for connection in connections where await connection.closedByServer(within: 500) { refused += 1 }
            #expect(refused >= 5)
            #expect(stack.logs.all.filter { $0.contains("latchkey.connections.limit_reached") }.count == 1)
            // The count comes back down: once they are gone, a new connection is served.
            for connection in connections { connection.close() }
            // (The server learns of the closes asynchronously: a few attempts, each bounded.)
            var served = false
            for _ in 0..<20 where !served {
                let fresh = try #require(RawConnection(port: port))
                fresh.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                served = await fresh.response(within: 500)?.hasPrefix("HTTP/1.1 200") == true
                fresh.close()
            }
            #expect(served)
        }
    }
}

extension RawConnection {
    /// Sends one byte every 100 ms until the server closes the connection, for at most 20 s: far
    /// longer than the deadlines under test, far shorter than the 75 s idle timeout that each byte
    /// used to reset. Whether the server closed it.
    func trickledUntilClosed() async -> Bool {
        for _ in 0..<200 {
            if await closedByServer(within: 100) || !write("a") { return true }
        }
        return false
    }
}
