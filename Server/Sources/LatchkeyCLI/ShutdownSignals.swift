import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// SIGTERM and SIGINT for `serve`: each starts the group's graceful shutdown, and the first is
/// kept, with when it came, so that the end is logged as an event (`latchkey.server.stopped`,
/// the signal and how long the drain took) rather than the process just going quiet.
final class ShutdownSignals: Sendable {
    private let first = Mutex<(signal: UnixSignal, at: ContinuousClock.Instant)?>(nil)

    /// The signals, trapped from now on: made before the group runs, so a SIGTERM that comes
    /// while its services start is a graceful shutdown too, not the default action (death with
    /// no drain and no `latchkey.server.stopped`), as ServiceLifecycle's own handling was.
    static func trap() async -> UnixSignalsSequence {
        await UnixSignalsSequence(trapping: .sigterm, .sigint)
    }

    /// Waits for `signals` (from `trap()`), until cancelled; each one asks `group` to shut down
    /// gracefully.
    func watch(_ signals: UnixSignalsSequence, _ group: ServiceGroup) async {
        for await signal in signals {
            first.withLock { if $0 == nil { $0 = (signal, .now) } }
            await group.triggerGracefulShutdown()
        }
    }

    /// Logs `latchkey.server.stopped`: the signal (name and number) and the drain's milliseconds
    /// as numbers, or neither when the group ended without one.
    func logStopped(_ logger: Logger, now: ContinuousClock.Instant = .now) {
        guard let (signal, at) = first.withLock({ $0 }) else {
            return logger.notice("latchkey.server.stopped")
        }
        let drained = now - at
        let milliseconds = drained.components.seconds * 1000 + drained.components.attoseconds / 1_000_000_000_000_000
        logger.notice(
            "latchkey.server.stopped",
            metadata: [
                "latchkey.shutdown.signal": .string(signal.description),
                "latchkey.shutdown.signal_number": .stringConvertible(Int(signal.rawValue)),
                "latchkey.shutdown.drain_ms": .stringConvertible(milliseconds),
            ])
    }
}
