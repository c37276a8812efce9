import Foundation
import LatchkeyAPI
import Logging
import ServiceLifecycle

/// Checks again, in the background, the apps whose credentials Facebook has not confirmed yet
/// (it could not be reached at start), backing off from `initialDelay` to five minutes, until
/// Facebook has answered for each. A refusal found this way cannot stop a running server: it is
/// logged as critical, naming the setting, and `/ready` reports `credentials_refused`.
struct FacebookCredentialMonitor: Service, CustomStringConvertible {
    let check: FacebookCredentialCheck
    let apps: [ServerConfiguration.FacebookApp]
    let initialDelay: Duration
    let logger: Logger

    static let maximumDelay: Duration = .seconds(300)

    /// What ServiceLifecycle logs for this service: app ids, never the apps' secrets.
    var description: String { "FacebookCredentialMonitor(apps: \(apps.map(\.id)))" }

    /// Checks until Facebook has answered for every app, then waits for the server to stop: a
    /// service that returns early would end the whole service group, server included.
    func run() async throws {
        guard await checkUntilAnswered() else { return }
        try? await gracefulShutdown()
    }

    /// Checks until Facebook has answered for every app; `false` when shutdown came first.
    func checkUntilAnswered() async -> Bool {
        var pending = apps
        var delay = initialDelay
        while !pending.isEmpty {
            let wait = delay
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
            } catch {
                return false  // shutting down
            }
            var still: [ServerConfiguration.FacebookApp] = []
            for (app, outcome) in await check.check(pending) {
                switch outcome {
                case .accepted:
                    logger.info(
                        "latchkey.facebook.credentials_accepted", metadata: ["latchkey.facebook.app": "\(app.id)"])
                case .refused(let reason):
                    logger.critical(
                        "latchkey.facebook.credentials_refused",
                        metadata: [
                            "latchkey.facebook.app": "\(app.id)", "latchkey.facebook.reason": "\(reason)",
                            "latchkey.setting": "LATCHKEY_FACEBOOK_APP_SECRET",
                        ])
                case .unreachable:
                    still.append(app)
                }
            }
            pending = still
            delay = min(max(delay * 2, .seconds(1)), Self.maximumDelay)
        }
        return true
    }
}
