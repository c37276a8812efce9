import Foundation
import LatchkeyServer
import Testing

/// `LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS`, on raw sockets from distinct loopback addresses. Every
/// connection a test keeps is first shown to be served, so the counts are the server's, never a
/// race between accepts; waits are bounded generously and the first-head deadline is set far past
/// them, so a close can only be the cap's.
@Suite("Connections per client address")
struct ConnectionsPerAddressTests {
    /// Deadlines out of every test's reach, and the given caps.
    static func caps(total: Int = 4096, perAddress: Int) -> @Sendable (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.http.maximumConnections = total
            configuration.http.maximumConnectionsPerAddress = perAddress
            configuration.http.firstRequestTimeout = 60
            configuration.http.idleTimeout = 60
        }
    }

    @Test("connections beyond the per-address cap are closed at once; a closed one frees its place")
    func beyondTheCap() async throws {
        try await Stack.run(Self.caps(perAddress: 3)) { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            let held = try await Self.served(3, from: "127.0.0.2", port: port)
            defer { for connection in held { connection.close() } }
            for _ in 0..<3 {
                let extra = try #require(RawConnection(port: port, from: "127.0.0.2"))
                defer { extra.close() }
                #expect(await extra.closedByServer(within: 30_000))
            }
            #expect(stack.logs.all.filter { $0.contains("latchkey.connections.address_limit_reached") }.count == 1)
            // The held ones are untouched, and the address gets a place back once one closes.
            #expect(await Self.isServed(held[0]))
            held[1].close()
            #expect(await Self.eventuallyServed(from: "127.0.0.2", port: port))
        }
    }

    @Test("one address holding its cap cannot stop a request from another address")
    func anotherAddressIsServed() async throws {
        // Without the per-address cap the twelve connections fill the global cap of 8.
        try await Stack.run(Self.caps(total: 8, perAddress: 4)) { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            let held = try await Self.served(4, from: "127.0.0.2", port: port)
            defer { for connection in held { connection.close() } }
            var extras: [RawConnection] = []
            defer { for connection in extras { connection.close() } }
            for _ in 0..<8 {
                let extra = try #require(RawConnection(port: port, from: "127.0.0.2"))
                extras.append(extra)
                #expect(await extra.closedByServer(within: 30_000))
            }
            let other = try #require(RawConnection(port: port, from: "127.0.0.3"))
            defer { other.close() }
            #expect(await Self.isServed(other))
        }
    }

    @Test("connections from a trusted proxy count only against the global cap")
    func trustedProxyIsNotCapped() async throws {
        try await Stack.run({
            Self.caps(perAddress: 2)(&$0)
            $0.http.trustedProxies = ["127.0.0.4/32"]
        }) { (stack: Stack) async throws in
            let port = try #require(stack.server.port)
            let held = try await Self.served(5, from: "127.0.0.4", port: port)
            for connection in held { connection.close() }
        }
    }

    /// `count` connections from `source`, each shown to be served before the next opens.
    static func served(_ count: Int, from source: String, port: Int) async throws -> [RawConnection] {
        var connections: [RawConnection] = []
        for index in 0..<count {
            let connection = try #require(RawConnection(port: port, from: source))
            connections.append(connection)
            #expect(await isServed(connection), "connection \(index + 1) from \(source)")
        }
        return connections
    }

    /// Whether `GET /health` on `connection` is answered 200 (the connection stays open).
    static func isServed(_ connection: RawConnection) async -> Bool {
        connection.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        // A bound for a hang, not a timing: a full pass on two cores can keep an answer for seconds.
        return await connection.response(within: 30_000)?.hasPrefix("HTTP/1.1 200") == true
    }

    /// Whether a new connection from `source` is served within a few attempts: the server learns
    /// of a close asynchronously.
    static func eventuallyServed(from source: String, port: Int) async -> Bool {
        for _ in 0..<20 {
            guard let fresh = RawConnection(port: port, from: source) else { continue }
            defer { fresh.close() }
            if await isServed(fresh) { return true }
        }
        return false
    }
}
