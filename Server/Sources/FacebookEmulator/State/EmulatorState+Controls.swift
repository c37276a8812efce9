import Foundation
import LatchkeyAPI

extension EmulatorState {
    // MARK: Keys

    /// The key that signs new id tokens.
    var activeKey: SigningKey? { signingKeys.first }

    /// Makes the oldest pre-published key (from `addKey`) the signing key, or a fresh one when none
    /// is waiting; the previous signing key stays published (Facebook publishes two at a time) and
    /// older ones are retired.
    func rotateKey() throws -> SigningKey {
        let next = pendingKeys.isEmpty ? try SigningKey.generate(now: now()) : pendingKeys.removeFirst()
        signingKeys = [next] + signingKeys.prefix(1)
        return next
    }

    /// Publishes a new key without signing with it yet, as before a planned rotation.
    func addKey() throws -> SigningKey {
        let key = try SigningKey.generate(now: now())
        pendingKeys.append(key)
        return key
    }

    /// Stops publishing a key; the signing key cannot be removed.
    func removeKey(kid: String) -> Bool {
        if let index = pendingKeys.firstIndex(where: { $0.kid == kid }) {
            pendingKeys.remove(at: index)
            return true
        }
        guard let index = signingKeys.firstIndex(where: { $0.kid == kid }), index > 0 else { return false }
        signingKeys.remove(at: index)
        return true
    }

    // MARK: Faults and call counts

    func addFault(_ fault: Fault) { faults.append(fault) }

    func clearFaults() { faults = [] }

    /// Counts a call, remembers how it was made, charges it to its app's platform rate limit
    /// (Graph calls only: `caller` is `nil` for the dialog and key documents), and returns the fault
    /// to apply to it, consuming one use of a counted fault. One step, so concurrent calls cannot
    /// both slip under the budget.
    func recordCall(
        endpoint: String, request: RecordedRequest, caller: CallerHint?
    ) -> (fault: Fault?, usage: UsageDecision) {
        calls[endpoint, default: 0] += 1
        requests.append(request)
        // Bounded: the log is for asserting on recent traffic, not an archive.
        if requests.count > RecordedRequest.retained { requests.removeFirst(requests.count - RecordedRequest.retained) }
        var fault: Fault?
        if let index = faults.firstIndex(where: { $0.applies(to: endpoint) }) {
            fault = faults[index]
            if let remaining = faults[index].remaining {
                if remaining <= 1 { faults.remove(at: index) } else { faults[index].remaining = remaining - 1 }
            }
        }
        let usage = caller.map { charge(usageSubject($0), count: fault?.error == nil) } ?? .untracked
        return (fault, usage)
    }

    func callCounts() -> [String: Int] { calls }

    func resetCallCounts() { calls = [:] }

    func clearRecordedRequests() { requests = [] }

    func recordedRequests() -> [RecordedRequest] { requests }
}
