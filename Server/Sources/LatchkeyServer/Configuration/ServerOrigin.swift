import NIOCore
import Synchronization

/// The server's public base URL, once known: `LATCHKEY_PUBLIC_URL`, or `http://host:port`, or,
/// when the port is 0 (any free port), the address actually bound. It is the issuer of access
/// tokens and the base of the Facebook callback, so it must be right before the first request.
final class ServerOrigin: Sendable {
    private let value: Mutex<String>
    private let waitsForBind: Bool

    init(_ configuration: ServerConfiguration) {
        value = Mutex(configuration.http.resolvedPublicURL)
        waitsForBind = configuration.http.publicURL == nil && configuration.http.port == 0
    }

    /// The base URL, without a trailing slash.
    var url: String { value.withLock { $0 } }

    /// Learns the bound address when the configuration left it to the operating system.
    func bound(to address: SocketAddress?) {
        guard waitsForBind, let port = address?.port, let ip = address?.ipAddress else { return }
        let host = ip.contains(":") ? "[\(ip)]" : ip
        value.withLock { $0 = "http://\(host):\(port)" }
    }
}
