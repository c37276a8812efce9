import Logging
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose client is too slow: its first request's head must arrive within
/// `firstHeadTimeout` of the connection opening, every later head within `headTimeout` of the
/// previous response ending, and a body must end within `bodyTimeout` of its head. Nothing is
/// armed while the server works on a request: a slow Facebook must not cut a sign-in whose
/// session is already stored.
///
/// The first head's deadline is the shorter: a real client opens a connection to send a request
/// at once, while one that opens connections and sends nothing holds them only to exhaust the
/// server's. Keep-alive idleness after a response is ordinary and keeps its longer deadline.
///
/// Hummingbird's idle timeout alone does not do this: every byte resets it, so a body trickled one
/// byte every few seconds held a connection and its handler open forever. These deadlines are
/// fixed when armed, whatever arrives meanwhile. One timer per connection, on its event loop.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let firstHeadTimeout: TimeAmount
    private let headTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private let logger: Logger
    private var deadline: Scheduled<Void>?
    /// Requests read whose response has not ended (HTTP/1.1 pipelining allows several).
    private var inFlight = 0

    /// - Parameters:
    ///   - firstHeadTimeout: from the connection opening to its first head (`LATCHKEY_FIRST_REQUEST_TIMEOUT`).
    ///   - headTimeout: from a response's end to the next head (`LATCHKEY_IDLE_TIMEOUT`).
    ///   - bodyTimeout: from a head to its body's end (`LATCHKEY_REQUEST_TIMEOUT`).
    init(firstHeadTimeout: TimeAmount, headTimeout: TimeAmount, bodyTimeout: TimeAmount, logger: Logger) {
        self.firstHeadTimeout = firstHeadTimeout
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        arm(firstHeadTimeout, waitingFor: "head", setting: "LATCHKEY_FIRST_REQUEST_TIMEOUT", context)
    }

    func handlerRemoved(context: ChannelHandlerContext) { deadline?.cancel() }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: arm(bodyTimeout, waitingFor: "body", setting: "LATCHKEY_REQUEST_TIMEOUT", context)
        case .body: break
        case .end:
            // Read in full: from here the time is the server's, until the response ends.
            inFlight += 1
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            inFlight = max(0, inFlight - 1)
            if inFlight == 0 { arm(headTimeout, waitingFor: "head", setting: "LATCHKEY_IDLE_TIMEOUT", context) }
        }
        context.write(data, promise: promise)
    }

    private func arm(
        _ timeout: TimeAmount, waitingFor part: String, setting: String, _ context: ChannelHandlerContext
    ) {
        deadline?.cancel()
        let logger = logger
        let peer = context.channel.remoteAddress?.ipAddress ?? "unknown"
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            // An idle keep-alive connection ends this way too, which is ordinary: only a body that
            // never finished is worth a notice.
            logger.log(
                level: part == "body" ? .notice : .debug, "latchkey.connection.too_slow",
                metadata: [
                    "latchkey.connection.waiting_for": "\(part)", "latchkey.connection.peer": "\(peer)",
                    "latchkey.setting": "\(setting)",
                ])
            loopBound.value.close(promise: nil)
        }
    }
}
