import Logging
import NIOCore
import Synchronization

/// Counts the server's open connections, in all and per client address, and refuses any beyond
/// either cap, so that no one address (and no crowd of slow or idle clients) can take every file
/// descriptor and stop the accepting of real connections.
///
/// A client is its TCP peer's address, IPv6 grouped by /64 as the abuse limits group it
/// (`ClientAddress.key`): one home or phone usually owns a whole /64. Forwarding headers play no
/// part (no request has been read when a connection opens), so behind a reverse proxy every
/// connection comes from the proxy; connections from `exempt` networks (the trusted proxies) are
/// therefore counted only in all, or every user behind the proxy would share one address's cap.
final class ConnectionCounter: Sendable {
    private struct State {
        var open = 0
        var refused = 0
        var refusedPerAddress = 0
        /// Open connections by client key; an address leaves the table with its last connection,
        /// so the table never holds more entries than `maximum`.
        var byAddress: [String: Int] = [:]
    }

    /// What `open` decided for a connection.
    enum Admission: Equatable {
        /// Counted; pass `key` back to `close`.
        case counted(key: String?)
        /// Refused: `maximum` connections are open.
        case refusedInAll
        /// Refused: its address has `maximumPerAddress` open.
        case refusedForAddress
    }

    private let state = Mutex(State())
    let maximum: Int
    /// 0 turns the per-address cap off.
    let maximumPerAddress: Int
    let exempt: [ClientAddress.Network]
    let logger: Logger

    /// - Parameters:
    ///   - maximum: most connections open at once (`LATCHKEY_MAX_CONNECTIONS`).
    ///   - maximumPerAddress: most from one client address (`LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS`); 0: no cap.
    ///   - exempt: networks whose connections only the global cap counts (`LATCHKEY_TRUSTED_PROXIES`).
    init(maximum: Int, maximumPerAddress: Int = 0, exempt: [ClientAddress.Network] = [], logger: Logger) {
        self.maximum = maximum
        self.maximumPerAddress = maximumPerAddress
        self.exempt = exempt
        self.logger = logger
    }

    /// The key a connection from `peer` is counted under per address; `nil` when it is counted
    /// only in all (no cap per address, a trusted proxy, or a peer without an IP address).
    func key(for peer: SocketAddress?) -> String? {
        guard maximumPerAddress > 0, let peer, let address = ClientAddress(peer) else { return nil }
        guard !exempt.contains(where: { $0.contains(address) }) else { return nil }
        return address.key
    }

    /// Counts a new connection from `peer`, unless it is one too many (it is then not counted).
    func open(from peer: SocketAddress?) -> Admission {
        let key = key(for: peer)
        let (admission, refused) = state.withLock { state -> (Admission, Int) in
            // Per address first: when one address fills both caps, the log names the cap that
            // stops it.
            if let key {
                let held = state.byAddress[key, default: 0]
                guard held < maximumPerAddress else {
                    state.refusedPerAddress += 1
                    return (.refusedForAddress, state.refusedPerAddress)
                }
                guard state.open < maximum else {
                    state.refused += 1
                    return (.refusedInAll, state.refused)
                }
                state.byAddress[key] = held + 1
            } else {
                guard state.open < maximum else {
                    state.refused += 1
                    return (.refusedInAll, state.refused)
                }
            }
            state.open += 1
            return (.counted(key: key), 0)
        }
        // One line when a cap first refuses, then one per thousand refusals: a flood must not
        // flood the log too.
        if refused == 1 || (refused > 0 && refused.isMultiple(of: 1000)) {
            switch admission {
            case .refusedInAll:
                logger.warning(
                    "latchkey.connections.limit_reached",
                    metadata: [
                        "latchkey.connections.maximum": .stringConvertible(maximum),
                        "latchkey.connections.refused": .stringConvertible(refused),
                        "latchkey.setting": "LATCHKEY_MAX_CONNECTIONS",
                    ])
            case .refusedForAddress:
                logger.warning(
                    "latchkey.connections.address_limit_reached",
                    metadata: [
                        "latchkey.connections.maximum": .stringConvertible(maximumPerAddress),
                        "latchkey.connections.refused": .stringConvertible(refused),
                        "latchkey.connection.peer": "\(key ?? "")",
                        "latchkey.setting": "LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS",
                    ])
            case .counted: break
            }
        }
        return admission
    }

    /// Forgets a connection `open` counted under `key`.
    func close(key: String?) {
        state.withLock { state in
            state.open -= 1
            guard let key, let held = state.byAddress[key] else { return }
            state.byAddress[key] = held > 1 ? held - 1 : nil
        }
    }

    /// Connections open now.
    var openCount: Int { state.withLock { $0.open } }
}
