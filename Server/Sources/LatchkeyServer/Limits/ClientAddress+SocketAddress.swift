import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ClientAddress {
    /// The IP address of a socket's peer; `nil` for a Unix-domain socket, which has none.
    ///
    /// Read from the socket address's bytes, not its text: this runs for every new connection, and
    /// formatting an address only to parse it back is wasted work there.
    ///
    /// The address is taken at its fixed offset (4 in `sockaddr_in`, 8 in `sockaddr_in6`, on Linux
    /// and the BSDs alike) rather than as `sin_addr`/`sin6_addr`: those members are declared both
    /// by the C library and by NIO's C shims, and which one the compiler deems their home varies
    /// between builds, so naming them fails member-import checks in some build directories.
    init?(_ socketAddress: SocketAddress) {
        switch socketAddress {
        case .v4(let address):
            self.init(raw: withUnsafeBytes(of: address.address) { Array($0[4..<4 + MemoryLayout<in_addr>.size]) })
        case .v6(let address):
            self.init(raw: withUnsafeBytes(of: address.address) { Array($0[8..<8 + MemoryLayout<in6_addr>.size]) })
        case .unixDomainSocket:
            return nil
        }
    }
}
