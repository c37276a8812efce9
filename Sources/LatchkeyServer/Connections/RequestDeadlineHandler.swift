import Logging
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose client is too slow: a request's head must arrive within
/// `headTimeout` of the connection opening (or of the previous request ending), and its body must
/// end within `bodyTimeout` of the head.
///
/// Hummingbird's idle timeout alone does not do this: every byte resets it, so a body trickled one
/// byte every few seconds held a connection and its handler open forever. These deadlines are
/// fixed when armed, whatever arrives meanwhile. One timer per connection on its event loop.
final class RequestDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let headTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private let logger: Logger
    private var deadline: Scheduled<Void>?

    init(headTimeout: TimeAmount, bodyTimeout: TimeAmount, logger: Logger) {
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) { arm(headTimeout, "head", context) }

    func handlerRemoved(context: ChannelHandlerContext) { deadline?.cancel() }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: arm(bodyTimeout, "body", context)
        case .body: break
        case .end: arm(headTimeout, "head", context)
        }
        context.fireChannelRead(data)
    }

    private func arm(_ timeout: TimeAmount, _ part: String, _ context: ChannelHandlerContext) {
        deadline?.cancel()
        let logger = logger
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            logger.notice("latchkey.connection.too_slow", metadata: ["latchkey.connection.waiting_for": "\(part)"])
            loopBound.value.close(promise: nil)
        }
    }
}
