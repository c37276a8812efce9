import AsyncHTTPClient
import Foundation
import LatchkeyAPI
import LatchkeyShared
import Logging
import NIOCore
import NIOHTTP1

/// Apple's REST API for Sign in with Apple (Apple, "Generate and validate tokens" and "Revoke
/// tokens"): exchanging an authorization code for tokens, and revoking a refresh token. Every
/// call carries a client secret minted for it (`AppleClientSecret`) under the client id the
/// credential was issued to: a refresh token is bound to that id (docs/apple.md).
struct AppleClient: Sendable {
    let client: HTTPClient
    let base: String
    let timeout: TimeInterval
    let secret: AppleClientSecret
    let health: AppleHealth
    let clock: @Sendable () -> Date
    let logger: Logger
    /// Calls by endpoint, their latency and failures (`latchkey_provider_*`).
    var metrics: ServerMetrics?

    /// The client of `configuration`'s Apple settings, or `nil` when Sign in with Apple is off.
    init?(
        configuration: ServerConfiguration, client: HTTPClient, health: AppleHealth, logger: Logger,
        metrics: ServerMetrics? = nil
    ) {
        let settings = configuration.apple
        guard settings.isEnabled, let teamID = settings.teamID, let keyID = settings.keyID,
            let key = settings.privateKey
        else { return nil }
        self.init(
            client: client, base: settings.base, timeout: settings.timeout,
            secret: AppleClientSecret(teamID: teamID, keyID: keyID, key: key.key), health: health,
            clock: configuration.clock, logger: logger)
        self.metrics = metrics
    }

    /// A client with every part given.
    init(
        client: HTTPClient, base: String, timeout: TimeInterval, secret: AppleClientSecret, health: AppleHealth,
        clock: @escaping @Sendable () -> Date, logger: Logger
    ) {
        self.client = client
        self.base = base
        self.timeout = timeout
        self.secret = secret
        self.health = health
        self.clock = clock
        self.logger = logger
    }

    /// What Apple answered a code exchange with.
    struct Tokens: Sendable {
        /// The refresh token: kept (sealed) to revoke at deletion; Apple always sends one for a code.
        var refreshToken: String?
        /// Apple's id token for the code, to bind the code to the id token the app sent.
        var idToken: String?
    }

    /// What Apple said to a call, as far as the caller cares.
    enum Refusal: Error, Sendable, Equatable {
        /// `invalid_grant`: the code (or token) is unknown, used, expired, or another client's.
        case invalidGrant
        /// `invalid_client`: Apple refused the client secret, the operator's configuration.
        case invalidClient
        /// Any other 400 error, by Apple's name.
        case other(String)
        /// No answer in time, a server error, or an answer that is not Apple's JSON.
        case unreachable
    }

    /// `POST /auth/token` with `grant_type=authorization_code`.
    /// - Parameter redirectURI: the web flow's return URL, which Apple requires again here.
    func exchange(code: String, clientID: String, redirectURI: String? = nil) async -> Result<Tokens, Refusal> {
        let answer = await post(
            "/auth/token", clientID: clientID,
            fields: [("grant_type", "authorization_code"), ("code", code)]
                + (redirectURI.map { [("redirect_uri", $0)] } ?? []))
        return answer.map {
            Tokens(refreshToken: $0["refresh_token"]?.stringValue, idToken: $0["id_token"]?.stringValue)
        }
    }

    /// `POST /auth/revoke` for a refresh token. Apple answers 200 also for a token that was
    /// already invalid (Apple's documentation; forum thread 707610), so success proves only that
    /// nothing valid is left.
    func revoke(refreshToken: String, clientID: String) async -> Result<Void, Refusal> {
        await post(
            "/auth/revoke", clientID: clientID,
            fields: [("token", refreshToken), ("token_type_hint", "refresh_token")]
        ).map { _ in () }
    }

    /// Whether Apple accepts the client secret: a code exchange with a code that cannot exist
    /// answers `invalid_grant` when the secret is good and `invalid_client` when it is not.
    func checkCredentials(clientID: String) async -> Result<Void, Refusal> {
        switch await exchange(code: "latchkey-credential-check", clientID: clientID) {
        case .success, .failure(.invalidGrant): return .success(())
        case .failure(let refusal): return .failure(refusal)
        }
    }

    /// Posts a form with the client id and a fresh secret; the JSON answer, or why not.
    private func post(_ path: String, clientID: String, fields: [(String, String)]) async -> Result<JSONValue, Refusal>
    {
        let body: String
        var request: HTTPClient.Request
        do {
            let secret = try secret.mint(clientID: clientID, now: clock())
            body = FormEncoding.encode([("client_id", clientID), ("client_secret", secret)] + fields)
            request = try HTTPClient.Request(url: base + path, method: .POST)
        } catch {
            logger.error("latchkey.apple.request_failed", metadata: ["latchkey.error.cause": "\(error)"])
            return .failure(.unreachable)
        }
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .string(body)
        let status: Int
        let answer: ByteBuffer
        let started = ContinuousClock.now
        // `/auth/token` is `token`, `/auth/revoke` `revoke`: fixed paths, never a person's.
        let endpoint = path.split(separator: "/").last.map(String.init) ?? "other"
        do {
            (status, _, answer) = try await BoundedExchange(client: client, timeout: timeout, maximumBody: 64 * 1024)
                .send(request)
            metrics?.providerCall(
                provider: "apple", endpoint: endpoint, failed: status >= 500, duration: .now - started)
        } catch {
            // Cancelled by our own shutdown (a check under way at a stop): not Apple's failure,
            // and no warning in an operator's log.
            if Task.isCancelled { return .failure(.unreachable) }
            metrics?.providerCall(provider: "apple", endpoint: endpoint, failed: true, duration: .now - started)
            health.failed()
            logger.warning(
                "latchkey.apple.unreachable",
                metadata: ["latchkey.apple.path": "\(path)", "latchkey.error.cause": "\(error)"])
            return .failure(.unreachable)
        }
        let json = try? JSONValue.decode(Data(answer.readableBytesView))
        switch status {
        case 200:
            health.credentials(accepted: true)
            // The revocation answers an empty body.
            return .success(json ?? [:])
        case 400..<500:
            guard let error = json?["error"]?.stringValue else {
                health.failed()
                return .failure(.unreachable)
            }
            health.answered()
            switch error {
            case "invalid_grant":
                // Refused for the code or token, so the secret was accepted.
                health.credentials(accepted: true)
                return .failure(.invalidGrant)
            case "invalid_client":
                health.credentials(accepted: false)
                logger.error(
                    "latchkey.apple.client_rejected",
                    metadata: [
                        "latchkey.apple.client_id": "\(clientID)",
                        "latchkey.error.hint":
                            "Apple refused the client secret: check LATCHKEY_APPLE_TEAM_ID, LATCHKEY_APPLE_KEY_ID and LATCHKEY_APPLE_PRIVATE_KEY_FILE, and that the key is enabled for Sign in with Apple and for this client id",
                    ])
                return .failure(.invalidClient)
            default: return .failure(.other(String(error.prefix(64))))
            }
        default:
            health.failed()
            logger.warning(
                "latchkey.apple.server_error",
                metadata: ["latchkey.apple.path": "\(path)", "latchkey.http.status": "\(status)"])
            return .failure(.unreachable)
        }
    }
}
