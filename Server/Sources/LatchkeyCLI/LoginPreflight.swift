import AsyncHTTPClient
import Foundation
import LatchkeyAPI
import LatchkeyShared
import NIOCore
import NIOHTTP1

/// What `latchkey login` checks before it opens a browser, so a mistake stops it at once with what
/// to change, instead of after a sign-in in the browser (or a 300 s wait): the server answers, it
/// calls itself by the URL given (the redirect's `iss` is checked against it, RFC 9207, and a
/// server reached as `localhost` calls itself `127.0.0.1`), and it knows the client id with a
/// loopback redirect.
enum LoginPreflight {
    static func check(server: URL, clientID: String) async throws {
        // Redirects are the answer here, not something to follow.
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            try await check(server: server, clientID: clientID, client: client)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    private static func check(server: URL, clientID: String, client: HTTPClient) async throws {
        let base =
            server.absoluteString.hasSuffix("/") ? String(server.absoluteString.dropLast()) : server.absoluteString
        let discovery: JSONValue
        do {
            let request = HTTPClientRequest(url: base + "/.well-known/oauth-authorization-server")
            // Short: a refused connection is retried until the deadline, and nobody answering is
            // the likeliest mistake.
            let response = try await client.execute(request, timeout: .seconds(5))
            let body = try await response.body.collect(upTo: 1 << 20)
            guard response.status.code == 200, let document = try? JSONValue.decode(Data(body.readableBytesView)) else {
                throw CommandError(
                    "\(base) answered \(response.status.code) for its discovery document: is it a Latchkey server?")
            }
            discovery = document
        } catch let error as CommandError {
            throw error
        } catch {
            throw CommandError("no server answers at \(base): is `latchkey serve` running there? (\(error))")
        }
        let issuer = discovery["issuer"]?.stringValue ?? ""
        guard issuer == base else {
            throw CommandError(
                "the server at \(base) calls itself \(issuer); sign in with --server \(issuer) "
                    + "(the sign-in's issuer must match, RFC 9207), or set the server's LATCHKEY_PUBLIC_URL")
        }
        // A request that is valid but for its missing response_type: a known client with this
        // redirect gets it back as an OAuth error redirect (nothing is stored); an unknown client
        // or an unregistered redirect gets an error page.
        let query = FormEncoding.encode([("client_id", clientID), ("redirect_uri", "http://127.0.0.1/callback")])
        let probe = try await client.execute(
            HTTPClientRequest(url: base + "/v1/oauth/authorize?" + query), timeout: .seconds(10))
        _ = try? await probe.body.collect(upTo: 1 << 20)
        switch probe.status.code {
        case 300..<400: return
        case 429: throw CommandError("the server at \(base) is rate-limiting sign-ins from here; try again in a minute")
        default:
            throw CommandError(
                "the server at \(base) does not know client id '\(clientID)' with the loopback redirect "
                    + "http://127.0.0.1/callback: register it in LATCHKEY_OAUTH_CLIENTS (`serve --dev` registers "
                    + "latchkey-cli), or pass --client-id")
        }
    }
}
