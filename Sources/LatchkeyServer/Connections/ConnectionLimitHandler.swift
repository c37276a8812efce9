import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Counts the server's open connections and closes any beyond `maximum` at once, so slow or
/// idle clients cannot take every file descriptor and stop the accepting of real ones.
final class ConnectionCounter: Sendable {
    private let state = Mutex((open: 0, refused: 0))
    let maximum: Int
    let logger: Logger

    init(maximum: Int, logger: Logger) {
        self.maximum = maximum
        self.logger = logger
    }

    /// Counts a new connection; `false` when it is one too many (it is then not counted).
    func open() -> Bool {
        let (accepted, refused) = state.withLock { state -> (Bool, Int) in
            guard state.open < maximum else {
                state.refused += 1
                return (false, state.refused)
            }
            state.open += 1
            return (true, state.refused)
        }
        // One line when the cap is first reached, then one per thousand refusals: a flood must not
        // flood the log too.
        if !accepted, refused == 1 || refused.isMultiple(of: 1000) {
            logger.warning(
                "latchkey.connections.limit_reached",
                metadata: [
                    "latchkey.connections.maximum": "\(maximum)", "latchkey.connections.refused": "\(refused)",
                    "latchkey.setting": "LATCHKEY_MAX_CONNECTIONS",
                ])
        }
        return accepted
    }

    func close() { state.withLock { $0.open -= 1 } }

    /// Connections open now.
    var openCount: Int { state.withLock { $0.open } }
}

/// One per connection: counts it with the shared `ConnectionCounter`, or closes it at once.
final class ConnectionLimitHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart

    private let counter: ConnectionCounter
    private var counted = false

    init(counter: ConnectionCounter) { self.counter = counter }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = counter.open()
        if !counted { context.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if counted { counter.close() }
        counted = false
    }
}
