import Foundation
import Logging
import ServiceLifecycle

/// Asks Apple, soon after the start and then every six hours, whether it accepts the client
/// secret of each client id: a code exchange with a code that cannot exist answers
/// `invalid_grant` for a good secret and `invalid_client` for a bad one (a wrong Team ID, Key
/// ID or key, a revoked key, a key not enabled for the client). A refusal is logged as an error
/// naming the settings, and `/ready` reports `apple: credentials_refused`, before a person meets
/// it at sign-in.
struct AppleCredentialMonitor: Service, CustomStringConvertible {
    let apple: AppleClient
    let clientIDs: [String]
    let logger: Logger

    /// Between two checks.
    static let interval: Duration = .seconds(6 * 3600)

    /// The client ids only.
    var description: String { "AppleCredentialMonitor(clients: \(clientIDs))" }

    /// Checks once right away (after the server had a moment to bind: in `--dev` the emulator
    /// starts beside it), then every interval until shutdown.
    func run() async {
        // Cancelled in that moment (a start that failed, a quick stop): nothing to check, and
        // no "cancelled" warnings before the real reason the server stopped.
        guard (try? await Task.sleep(for: .seconds(1))) != nil else { return }
        await checkAll()
        await runPeriodically(every: Self.interval) { await checkAll() }
    }

    /// Checks every client id; the client logs and records what Apple says.
    func checkAll() async {
        for clientID in clientIDs {
            if case .failure(.invalidClient) = await apple.checkCredentials(clientID: clientID) {
                logger.critical(
                    "latchkey.apple.credentials_refused",
                    metadata: [
                        "latchkey.apple.client_id": "\(clientID)",
                        "latchkey.setting":
                            "LATCHKEY_APPLE_TEAM_ID, LATCHKEY_APPLE_KEY_ID, LATCHKEY_APPLE_PRIVATE_KEY_FILE",
                    ])
            }
        }
    }
}
