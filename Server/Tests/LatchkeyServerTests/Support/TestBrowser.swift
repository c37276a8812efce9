import AsyncHTTPClient
import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared
import NIOCore
import Testing

/// Plays the person's browser in Easy Login over real HTTP: one redirect at a time, choosing an
/// account on the emulator's dialog, and stopping at the first URL that belongs to the app.
enum TestBrowser {
    /// Where a navigation ended: a redirect the browser hands to the app, or a page shown.
    enum Outcome: Equatable {
        case redirect(String)
        case page(status: Int, body: String)

        var location: String? {
            if case .redirect(let location) = self { return location }
            return nil
        }
    }

    private static let client = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    /// One GET, redirects not followed.
    static func get(_ url: String) async throws -> Outcome {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        if response.status.code == 302, let location = response.headers["Location"].first {
            return .redirect(location)
        }
        return .page(status: Int(response.status.code), body: String(buffer: body))
    }

    /// Follows an authorization URL through the server and the emulator's dialog to the app.
    /// - Parameters:
    ///   - choose: added to the dialog URL: `emulator_user=alice`, `emulator_action=cancel`, ….
    ///   - beforeCallback: runs once Facebook has answered, before the browser reaches the server.
    static func signIn(
        _ authorizeURL: String, stack: Stack, choose: String = "emulator_user=alice",
        beforeCallback: @Sendable () async throws -> Void = {}
    ) async throws -> Outcome {
        let first = try await get(authorizeURL)
        guard let dialog = first.location, dialog.hasPrefix(stack.emulatorURL) else { return first }
        let answered = try await get(dialog + "&" + choose)
        guard let callback = answered.location, callback.contains("/v1/oauth/facebook/callback") else {
            return answered
        }
        try await beforeCallback()
        return try await get(callback)
    }

    /// The query of a URL as a dictionary.
    static func query(_ url: String) -> [String: String] {
        FormEncoding.decode(URLComponents(string: url)?.percentEncodedQuery ?? "")
    }
}

/// An Easy Login attempt as a client library would make it: verifier, challenge, state, URL.
struct AuthorizeRequest {
    var clientID = Demo.clientID
    var redirectURI = Demo.appRedirect
    var state = "client-state-123"
    var verifier = String(repeating: "v", count: 20) + UUID().uuidString.replacingOccurrences(of: "-", with: "")
    var scope = "email"
    var extra: [(String, String)] = []

    var challenge: String { Base64URL.encode(Data(SHA256.hash(data: Data(verifier.utf8)))) }

    func url(_ stack: Stack) -> String { url(base: stack.serverURL.absoluteString) }

    /// The authorization URL on the server at `base`.
    func url(base: String) -> String {
        var pairs: [(String, String)] = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("state", state),
            ("code_challenge", challenge), ("code_challenge_method", "S256"), ("scope", scope),
        ]
        pairs += extra
        return base + "/v1/oauth/authorize?" + FormEncoding.encode(pairs)
    }

    /// The token request for `code`, as form pairs.
    func tokenForm(code: String) -> [(String, String)] {
        [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
            ("code_verifier", verifier), ("client_id", clientID),
        ]
    }
}
