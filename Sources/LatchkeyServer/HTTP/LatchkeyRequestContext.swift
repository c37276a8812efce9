import Hummingbird
import Logging
import NIOCore

/// The server's request context: Hummingbird's core context plus the peer address, which the
/// abuse limits count by (`ClientAddress`).
struct LatchkeyRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The TCP peer: a client, or a trusted proxy in front of it.
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
