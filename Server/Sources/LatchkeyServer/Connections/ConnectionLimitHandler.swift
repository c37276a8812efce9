import NIOCore
import NIOHTTPTypes

/// One per connection: counts it with the shared `ConnectionCounter`, or closes it at once.
final class ConnectionLimitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart

    private let counter: ConnectionCounter
    /// What the counter decided; `nil` once the connection is forgotten.
    private var admission: ConnectionCounter.Admission?

    init(counter: ConnectionCounter) { self.counter = counter }

    func handlerAdded(context: ChannelHandlerContext) {
        // An accepted socket knows its peer from the start, before any byte is read.
        let admission = counter.open(from: context.channel.remoteAddress)
        self.admission = admission
        if case .counted = admission { return }
        context.close(promise: nil)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if case .counted(let key) = admission { counter.close(key: key) }
        admission = nil
    }
}
