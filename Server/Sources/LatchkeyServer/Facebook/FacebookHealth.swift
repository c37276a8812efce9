import Foundation
import LatchkeyAPI
import Synchronization

/// What the server last heard from Facebook, for `/ready`: kept from the answers real work got,
/// so a probe never calls Facebook (`/ready` is public, and each call would spend the app's Graph
/// rate limit).
final class FacebookHealth: Sendable {
    /// Facebook's state as `/ready` reports it.
    enum Status: String, Sendable {
        /// Nothing heard yet (no sign-in and no credential check has reached Facebook).
        case unknown
        /// The last call got an answer, and no app's credentials were refused since they were accepted.
        case ok
        /// The last call got no answer in time, or a server error.
        case unreachable
        /// Facebook refused an app's id or secret: sign-ins with classic tokens and Easy Login fail
        /// until the configuration is fixed.
        case credentialsRefused = "credentials_refused"
    }

    private struct State {
        /// Whether the last call got an answer; `nil` before any call.
        var reachable: Bool?
        /// Per app id: whether Facebook last accepted (`true`) or refused its credentials.
        var credentials: [String: Bool] = [:]
    }

    private let state = Mutex(State())

    /// Facebook answered (whatever it said). The order of events decides, not their time
    /// (tests run on a clock that stands still).
    func answered() { state.withLock { $0.reachable = true } }

    /// Facebook did not answer in time, or answered with a server error.
    func failed() { state.withLock { $0.reachable = false } }

    /// Facebook accepted (`true`) or refused an app's own credentials.
    func credentials(of appID: String, accepted: Bool) {
        state.withLock {
            $0.credentials[appID] = accepted
            $0.reachable = true
        }
    }

    /// The status to report.
    var status: Status {
        state.withLock { state in
            if state.credentials.values.contains(false) { return .credentialsRefused }
            switch state.reachable {
            case nil: return .unknown
            case true?: return .ok
            case false?: return .unreachable
            }
        }
    }

    /// Records what an error from a Facebook call says about Facebook's health.
    func observe(_ error: APIError, appID: String?) {
        if error.cause is CredentialRefusal, let appID {
            credentials(of: appID, accepted: false)
        } else if error.code == .facebookUnavailable {
            failed()
        }
    }
}
