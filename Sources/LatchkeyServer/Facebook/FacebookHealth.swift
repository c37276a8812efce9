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
        var lastAnswer: Date?
        var lastFailure: Date?
        /// Per app id: whether Facebook last accepted (`true`) or refused its credentials.
        var credentials: [String: Bool] = [:]
    }

    private let state = Mutex(State())

    /// Facebook answered (whatever it said).
    func answered(at now: Date) { state.withLock { $0.lastAnswer = now } }

    /// Facebook did not answer in time, or answered with a server error.
    func failed(at now: Date) { state.withLock { $0.lastFailure = now } }

    /// Facebook accepted (`true`) or refused an app's own credentials.
    func credentials(of appID: String, accepted: Bool, at now: Date) {
        state.withLock {
            $0.credentials[appID] = accepted
            $0.lastAnswer = now
        }
    }

    /// The status to report.
    var status: Status {
        state.withLock { state in
            if state.credentials.values.contains(false) { return .credentialsRefused }
            switch (state.lastAnswer, state.lastFailure) {
            case (nil, nil): return .unknown
            case (nil, .some): return .unreachable
            case (.some, nil): return .ok
            case (.some(let answer), .some(let failure)): return failure > answer ? .unreachable : .ok
            }
        }
    }

    /// Records what an error from a Facebook call says about Facebook's health.
    func observe(_ error: APIError, appID: String?, at now: Date) {
        if error.cause is CredentialRefusal, let appID {
            credentials(of: appID, accepted: false, at: now)
        } else if error.code == .facebookUnavailable {
            failed(at: now)
        }
    }
}
