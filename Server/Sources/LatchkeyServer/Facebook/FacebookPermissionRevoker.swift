import AsyncHTTPClient
import Foundation
import LatchkeyAPI
import Logging

/// Revokes the app's permissions of a deleted account's Facebook identity:
/// `DELETE /{app-scoped-id}/permissions` with that app's token, so the person's Facebook settings
/// no longer list the app and its tokens stop working (facebook-protocol.md §5.3). Idempotent:
/// revoking twice, or revoking for a person Facebook no longer knows under the app, is done.
package struct FacebookPermissionRevoker: Sendable {
    let graph: GraphClient
    let apps: [ServerConfiguration.FacebookApp]
    let logger: Logger

    /// Graph's answer for an object that does not exist or cannot be deleted any more (code 100,
    /// subcode 33), and for a person who removed the app already: nothing is left to revoke.
    static let nothingLeftSubcodes: Set<Int> = [33]

    /// Runs one revocation job (`StoredJob.Kind.facebookRevokePermissions`).
    func revoke(_ job: StoredJob) async -> JobResult {
        guard let appID = job.payload["app_id"]?.stringValue, let subject = job.payload["subject"]?.stringValue,
            GraphClient.isGraphID(subject)
        else { return .failed("malformed job") }
        // The app may have left the configuration since: retried until it is back or the job gives up.
        guard let app = apps.first(where: { $0.id == appID }) else { return .failed("app \(appID) is not configured") }
        let answer: GraphClient.Answer
        do {
            answer = try await graph.delete("/\(subject)/permissions", bearer: app.appToken, app: app.id)
        } catch {
            return .failed("facebook unreachable")
        }
        guard let failure = answer.failure else {
            return answer.body["success"] == .bool(true)
                ? .done(detail: ["app_id": .string(appID), "outcome": "revoked"])
                : .failed("unexpected answer")
        }
        if failure.isAboutOurCredentials {
            logger.error(
                "latchkey.jobs.facebook_credentials_refused",
                metadata: ["latchkey.facebook.app_id": "\(appID)", "latchkey.error.cause": "\(failure)"])
            return .failed("facebook refused the app's credentials")
        }
        if failure.code == 100, failure.subcode.map(Self.nothingLeftSubcodes.contains) == true, !failure.isTransient {
            return .done(detail: ["app_id": .string(appID), "outcome": "nothing_to_revoke"])
        }
        return .failed("graph error \(failure.code.map(String.init) ?? "?")")
    }
}

extension FacebookPermissionRevoker {
    /// A revoker calling the configured Graph API through `client`, as the server's own
    /// (`buildApplication`) does; for running jobs outside a running server (tests, tools).
    package init(configuration: ServerConfiguration, client: HTTPClient, logger: Logger) {
        let usage = FacebookUsageMonitor(
            warningPercent: configuration.facebook.usageWarningPercent,
            tightenPercent: configuration.facebook.usageTightenPercent, clock: configuration.clock, logger: logger)
        self.init(
            graph: GraphClient(
                client: client, base: configuration.facebook.graphBase, timeout: configuration.facebook.timeout,
                health: FacebookHealth(), usage: usage),
            apps: configuration.facebook.apps, logger: logger)
    }
}
