import Foundation
import Logging
import Synchronization

/// The log line of a limit reached (`latchkey.limits.refused`), sampled: at most one per rule every
/// `interval`, saying how many refusals it stands for, so a flood of 429s (an attack, an app in a
/// loop) is visible without a line per request. The line names the rule, never the key counted
/// (an address, a person's Facebook id).
final class RefusalLog: Sendable {
    private let logger: Logger
    private let interval: TimeInterval
    /// Per rule: when it last logged, and the refusals since.
    private let state = Mutex<[String: (logged: Date, refused: Int)]>([:])

    init(logger: Logger, interval: TimeInterval = 10) {
        self.logger = logger
        self.interval = interval
    }

    /// Counts a refusal under `rule`; logs when the rule's last line is `interval` old.
    func refused(_ rule: RateRule, retryAfter: Int, now: Date) {
        let count: Int? = state.withLock { state in
            let entry = state[rule.name] ?? (logged: .distantPast, refused: 0)
            guard now.timeIntervalSince(entry.logged) >= interval else {
                state[rule.name] = (entry.logged, entry.refused + 1)
                return nil
            }
            state[rule.name] = (now, 0)
            return entry.refused + 1
        }
        guard let count else { return }
        logger.notice(
            "latchkey.limits.refused",
            metadata: [
                "latchkey.limit.rule": "\(rule.name)", "latchkey.limit.refused": .stringConvertible(count),
                "latchkey.limit.retry_after": .stringConvertible(retryAfter),
            ])
    }
}
