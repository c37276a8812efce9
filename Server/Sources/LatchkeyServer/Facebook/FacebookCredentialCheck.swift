import Foundation
import LatchkeyAPI

/// Checks that Facebook accepts an app's id and secret, with one app-token call: `GET /app` with
/// `APPID|SECRET` in the `Authorization` header answers the app's id. A wrong secret is otherwise
/// found only at the first classic sign-in, as a 500.
struct FacebookCredentialCheck: Sendable {
    let graph: GraphClient
    let health: FacebookHealth

    /// What Facebook said about one app's credentials.
    enum Outcome: Sendable, Equatable {
        case accepted
        /// Refused, with Facebook's message (which names no secret).
        case refused(String)
        /// No answer that settles it: unreachable, too slow, throttled, or a server error.
        case unreachable
    }

    func check(_ app: ServerConfiguration.FacebookApp) async -> Outcome {
        let answer: GraphClient.Answer
        do {
            answer = try await graph.get("/app", query: [], bearer: app.appToken, app: app.id)
        } catch {
            return .unreachable
        }
        if let failure = answer.failure {
            // A wrong secret can come as code 1 ("Error validating client secret."): the words decide first.
            if !failure.isAboutOurCredentials, FacebookTriage.facebookTrouble(failure) != nil || failure.code == 1 {
                return .unreachable
            }
            health.credentials(of: app.id, accepted: false)
            return .refused(failure.safeMessage)
        }
        guard answer.body["id"]?.stringValue == app.id else {
            health.credentials(of: app.id, accepted: false)
            return .refused("the app token answered for another app")
        }
        health.credentials(of: app.id, accepted: true)
        return .accepted
    }

    /// Checks every app at once.
    func check(_ apps: [ServerConfiguration.FacebookApp]) async -> [(ServerConfiguration.FacebookApp, Outcome)] {
        await withTaskGroup(of: (Int, Outcome).self) { group in
            for (index, app) in apps.enumerated() { group.addTask { (index, await check(app)) } }
            var outcomes: [(Int, Outcome)] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes.sorted { $0.0 < $1.0 }.map { (apps[$0.0], $0.1) }
        }
    }
}

/// When to check the Facebook app credentials (`LATCHKEY_FACEBOOK_STARTUP_CHECK`).
package enum FacebookStartupCheck: String, Sendable, CaseIterable {
    /// Before binding: a refused secret stops the start, naming the setting; an unreachable
    /// Facebook logs a warning and is checked again in the background.
    case beforeStart = "before-start"
    /// Only in the background, right after start (`serve --dev`, whose emulator starts alongside).
    case background
    /// Never (the first sign-in finds a wrong secret).
    case off
}
