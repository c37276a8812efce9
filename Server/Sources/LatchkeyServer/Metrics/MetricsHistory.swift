import Foundation
import Synchronization

/// The last 24 hours of this node's sign-ins, errors and provider calls, hour by hour, for the
/// console's dashboard. Prometheus keeps only running totals, which a page cannot turn into "per
/// hour" without a time-series database; this keeps 24 small buckets in memory instead.
///
/// Per node and since the process started, as the dashboard says: the whole cluster's history
/// belongs to Prometheus, which scrapes every node. Recording is one uncontended lock and a few
/// dictionary increments, on paths that already count the same event for `/metrics`.
package final class MetricsHistory: Sendable {
    /// How many hours are kept.
    package static let hours = 24

    /// One hour's counts.
    package struct Hour: Sendable, Equatable {
        /// Hours since 1970 (UTC): which hour this is.
        package var index: Int
        /// Sign-ins by `provider · method`, counting accounts created and returning people.
        package var signIns: [String: Int] = [:]
        /// Errors answered, by code.
        package var errors: [String: Int] = [:]
        /// Calls to each provider (`facebook`, `apple`): how many, how long in all, how many failed.
        package var providerCalls: [String: ProviderCalls] = [:]
    }

    /// Calls to one provider in one hour.
    package struct ProviderCalls: Sendable, Equatable {
        /// Calls made.
        package var count = 0
        /// Their durations added up, seconds.
        package var seconds = 0.0
        /// Calls that got no answer or a 5xx.
        package var failed = 0

        /// The mean duration, seconds, or `nil` without calls.
        package var mean: Double? { count == 0 ? nil : seconds / Double(count) }
    }

    private let clock: @Sendable () -> Date
    /// One hour per slot (`slot(index)`); a slot whose `index` is another hour's is stale.
    private let slots = Mutex<[Hour]>(Array(repeating: Hour(index: .min), count: MetricsHistory.hours))

    /// A history read through `clock`.
    package init(clock: @escaping @Sendable () -> Date) {
        self.clock = clock
    }

    /// A sign-in the store recorded.
    func signIn(provider: String, method: String) {
        update { $0.signIns["\(provider) · \(method)", default: 0] += 1 }
    }

    /// An error answered with `code`.
    func error(code: String) {
        update { $0.errors[code, default: 0] += 1 }
    }

    /// A call to `provider` that took `seconds`.
    func providerCall(provider: String, failed: Bool, seconds: Double) {
        update { hour in
            hour.providerCalls[provider, default: ProviderCalls()].count += 1
            hour.providerCalls[provider, default: ProviderCalls()].seconds += seconds
            if failed { hour.providerCalls[provider, default: ProviderCalls()].failed += 1 }
        }
    }

    /// The last `hours` hours, oldest first, the current one last; an hour nothing happened in is
    /// empty.
    package func recent() -> [Hour] {
        let now = Self.index(clock())
        let stored = slots.withLock { $0 }
        return ((now - Self.hours + 1)...now).map { index in
            let hour = stored[Self.slot(index)]
            return hour.index == index ? hour : Hour(index: index)
        }
    }

    /// Changes the current hour in place: a copy taken out of the array and written back would
    /// copy its dictionaries on every event (they would be shared with the array's copy).
    private func update(_ change: (inout Hour) -> Void) {
        let index = Self.index(clock())
        slots.withLock { slots in
            let slot = Self.slot(index)
            if slots[slot].index != index { slots[slot] = Hour(index: index) }
            change(&slots[slot])
        }
    }

    private static func index(_ date: Date) -> Int { Int((date.timeIntervalSince1970 / 3600).rounded(.down)) }

    private static func slot(_ index: Int) -> Int { ((index % hours) + hours) % hours }
}
