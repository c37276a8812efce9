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
    init?(_ socketAddress: SocketAddress) {
        switch socketAddress {
        case .v4(let address):
            self.init(raw: withUnsafeBytes(of: address.address.sin_addr) { Array($0) })
        case .v6(let address):
            self.init(raw: withUnsafeBytes(of: address.address.sin6_addr) { Array($0) })
        case .unixDomainSocket:
            return nil
        }
    }
}
