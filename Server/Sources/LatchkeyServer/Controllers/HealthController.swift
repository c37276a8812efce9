import Hummingbird
import LatchkeyAPI
import Logging

/// `/health` (the process answers) and `/ready` (this node can serve: its database and its
/// signing keys; Facebook's and Apple's state reported, never decisive).
struct HealthController: Controller {
    let store: any LatchkeyStore
    let tokens: SessionTokens
    /// What the server last heard from Facebook.
    let health: FacebookHealth
    /// The Graph usage Facebook last reported per app.
    let usage: FacebookUsageMonitor
    /// What the server last heard from Apple (`off` without Sign in with Apple).
    let apple: AppleHealth

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.get, "/health") { _, _ in try Response.json(["status": "ok"]) }
        router.route(.get, "/ready") { _, context in try await ready(context) }
    }

    /// Facebook's state comes from the last real answers, never from a call per probe: this
    /// endpoint is public. Only this node's own state decides the status code (the database, its
    /// signing keys): Facebook trouble hits every node alike, and refresh and `/v1/users/me` keep
    /// working without Facebook.
    func ready(_ context: LatchkeyRequestContext) async throws -> Response {
        var databaseUp = true
        do {
            try await store.ping()
        } catch {
            databaseUp = false
            context.logger.warning("latchkey.ready.database_down", metadata: ["latchkey.error.cause": "\(error)"])
        }
        // Stored keys this server refused at its last refresh: it signs on with the ring it has
        // but would not start again, so it should leave the load balancer before it restarts.
        let keyRefusal = tokens.keys.refusal
        var body: [String: JSONValue] = [
            "status": databaseUp && keyRefusal == nil ? "ready" : "unavailable",
            "database": databaseUp ? "ok" : "unreachable", "signing_keys": keyRefusal == nil ? "ok" : "refused",
            "facebook": .string(health.status.rawValue), "apple": .string(apple.status.rawValue),
            // Per app: the last X-App-Usage (and business-use-case) figures, their level and time.
            "facebook_usage": usage.report,
        ]
        if let keyRefusal { body["signing_keys_reason"] = .string(keyRefusal) }
        var response = try Response.json(JSONValue.object(body))
        response.headers[.cacheControl] = "no-store"
        if !databaseUp || keyRefusal != nil {
            response.status = .serviceUnavailable
            response.headers[.retryAfter] = "5"
        }
        return response
    }
}
