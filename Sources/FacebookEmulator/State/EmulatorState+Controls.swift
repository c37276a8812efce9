import Foundation

extension EmulatorState {
    // MARK: Keys

    /// The key that signs new id tokens.
    var activeKey: SigningKey? { keys.first }

    /// Generates a key and makes it the signing key; the previous one stays published (Facebook
    /// publishes two at a time), older ones are retired.
    func rotateKey() throws -> SigningKey {
        let key = try SigningKey.generate(now: now())
        keys.insert(key, at: 0)
        if keys.count > 2 { keys.removeLast(keys.count - 2) }
        return key
    }

    /// Publishes a new key without signing with it yet, as before a planned rotation.
    func addKey() throws -> SigningKey {
        let key = try SigningKey.generate(now: now())
        keys.append(key)
        return key
    }

    /// Stops publishing a key; the last key cannot be removed.
    func removeKey(kid: String) -> Bool {
        guard keys.count > 1, let index = keys.firstIndex(where: { $0.kid == kid }) else { return false }
        keys.remove(at: index)
        return true
    }

    // MARK: Faults and call counts

    func addFault(_ fault: Fault) { faults.append(fault) }

    func clearFaults() { faults = [] }

    /// Counts a call and returns the fault to apply to it, consuming one use of a counted fault.
    func recordCall(endpoint: String) -> Fault? {
        calls[endpoint, default: 0] += 1
        guard let index = faults.firstIndex(where: { $0.applies(to: endpoint) }) else { return nil }
        let fault = faults[index]
        if let remaining = fault.remaining {
            if remaining <= 1 { faults.remove(at: index) } else { faults[index].remaining = remaining - 1 }
        }
        return fault
    }

    func callCounts() -> [String: Int] { calls }

    func resetCallCounts() { calls = [:] }
}
