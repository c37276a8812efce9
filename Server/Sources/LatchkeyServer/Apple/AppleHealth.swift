import Synchronization

/// What the server last heard from Apple, for `/ready`: kept from the answers real work got (key
/// fetches, code exchanges, revocations) and from the credential check, so a probe never calls
/// Apple.
final class AppleHealth: Sendable {
    /// Apple's state as `/ready` reports it.
    enum Status: String, Sendable {
        /// Sign in with Apple is not configured.
        case off
        /// Nothing heard yet.
        case unknown
        /// The last call got an answer, and Apple accepted the client secret when last asked.
        case ok
        /// The last call got no answer in time, or a server error.
        case unreachable
        /// Apple refused the client secret (`invalid_client`): the Team ID, Key ID or key is
        /// wrong, or the key was revoked; every Apple sign-in fails until it is fixed.
        case credentialsRefused = "credentials_refused"
    }

    private struct State {
        var reachable: Bool?
        var credentialsAccepted: Bool?
    }

    private let enabled: Bool
    private let state = Mutex(State())

    /// Health for a server where Apple is `enabled` or not.
    init(enabled: Bool) { self.enabled = enabled }

    /// Apple answered (whatever it said).
    func answered() { state.withLock { $0.reachable = true } }

    /// Apple did not answer in time, or answered with a server error.
    func failed() { state.withLock { $0.reachable = false } }

    /// Apple accepted (`true`) or refused the client secret.
    func credentials(accepted: Bool) {
        state.withLock {
            $0.credentialsAccepted = accepted
            $0.reachable = true
        }
    }

    /// The status to report.
    var status: Status {
        guard enabled else { return .off }
        return state.withLock { state in
            if state.credentialsAccepted == false { return .credentialsRefused }
            switch state.reachable {
            case nil: return .unknown
            case true?: return .ok
            case false?: return .unreachable
            }
        }
    }
}
