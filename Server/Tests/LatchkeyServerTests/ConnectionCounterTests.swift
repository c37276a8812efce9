import Logging
import NIOCore
import Testing

@testable import LatchkeyServer

/// How `ConnectionCounter` keys and caps connections, without sockets.
@Suite("Connection counter")
struct ConnectionCounterTests {
    static func counter(total: Int = 100, perAddress: Int, exempt: [String] = []) -> ConnectionCounter {
        ConnectionCounter(
            maximum: total, maximumPerAddress: perAddress, exempt: exempt.compactMap(ClientAddress.Network.init),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    static func peer(_ ip: String) throws -> SocketAddress { try SocketAddress(ipAddress: ip, port: 40_000) }

    @Test("IPv6 peers of one /64 share a cap; another /64 has its own")
    func ipv6ByPrefix() throws {
        let counter = Self.counter(perAddress: 2)
        #expect(counter.open(from: try Self.peer("2001:db8:1:2::1")) != .refusedForAddress)
        #expect(counter.open(from: try Self.peer("2001:db8:1:2:ffff::9")) != .refusedForAddress)
        #expect(counter.open(from: try Self.peer("2001:db8:1:2:aaaa::3")) == .refusedForAddress)
        #expect(counter.open(from: try Self.peer("2001:db8:1:3::1")) != .refusedForAddress)
    }

    @Test("an IPv4-mapped IPv6 peer is the IPv4 client it wraps")
    func mappedIPv4() throws {
        let counter = Self.counter(perAddress: 1)
        #expect(counter.key(for: try Self.peer("::ffff:192.0.2.7")) == "v4:192.0.2.7")
        #expect(counter.open(from: try Self.peer("192.0.2.7")) == .counted(key: "v4:192.0.2.7"))
        #expect(counter.open(from: try Self.peer("::ffff:192.0.2.7")) == .refusedForAddress)
    }

    @Test("closing frees the address's place; exempt networks and a cap of 0 count only in all")
    func closeAndExemptions() throws {
        let counter = Self.counter(total: 3, perAddress: 1, exempt: ["10.0.0.0/8"])
        let first = counter.open(from: try Self.peer("192.0.2.7"))
        guard case .counted(let key) = first else {
            Issue.record("not counted: \(first)")
            return
        }
        counter.close(key: key)
        #expect(counter.open(from: try Self.peer("192.0.2.7")) == .counted(key: "v4:192.0.2.7"))
        #expect(counter.open(from: try Self.peer("10.1.2.3")) == .counted(key: nil))
        #expect(counter.open(from: try Self.peer("10.1.2.3")) == .counted(key: nil))
        #expect(counter.open(from: try Self.peer("10.1.2.3")) == .refusedInAll)
        #expect(counter.openCount == 3)
        #expect(Self.counter(perAddress: 0).key(for: try Self.peer("192.0.2.7")) == nil)
    }
}
