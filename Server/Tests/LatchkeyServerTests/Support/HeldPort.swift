import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A TCP port on 127.0.0.1 held by a listening socket (never accepting), for tests of what
/// happens when a port is taken; close the descriptor to release it.
enum HeldPort {
    /// A TCP port held by a listening socket for the test's duration.
    static func hold() throws -> (descriptor: Int32, port: Int) {
        try bound(listening: true)
    }

    /// A TCP port bound but not listening: a connection to it is refused at once (a reset),
    /// and no other process can take the port meanwhile.
    static func refusing() throws -> (descriptor: Int32, port: Int) {
        try bound(listening: false)
    }

    private static func bound(listening: Bool) throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0 && (!listening || listen(descriptor, 1) == 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
