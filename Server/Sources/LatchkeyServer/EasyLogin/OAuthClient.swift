import Foundation
import LatchkeyAPI
import LatchkeyShared

/// An app allowed to use Easy Login (`/v1/oauth/authorize`). Every client is public (a native or
/// desktop app cannot keep a secret, RFC 8252 §8.5), so PKCE with S256 is always required.
package struct OAuthClient: Sendable, Equatable {
    /// The `client_id` the app sends.
    package var id: String
    /// Redirect URIs, matched exactly; a loopback one (`http://127.0.0.1/…`, `http://[::1]/…`)
    /// matches on any port (RFC 8252 §7.3).
    package var redirectURIs: [String]

    /// Creates a client.
    package init(id: String, redirectURIs: [String]) {
        self.id = id
        self.redirectURIs = redirectURIs
    }

    /// Whether `uri` is one of this client's redirect URIs.
    func accepts(redirectURI uri: String) -> Bool {
        guard let presented = RedirectURI(uri) else { return false }
        return redirectURIs.contains { registered in RedirectURI(registered)?.matches(presented) ?? false }
    }

    /// Parses `LATCHKEY_OAUTH_CLIENTS`: comma-separated `client_id=redirect_uri` entries, a client
    /// named once per redirect URI (`app=myapp://auth,app=http://127.0.0.1/callback,cli=…`).
    static func parse(_ entries: [String]) throws -> [OAuthClient] {
        var clients: [OAuthClient] = []
        for entry in entries {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ConfigurationError(
                    "LATCHKEY_OAUTH_CLIENTS entries look like client_id=redirect_uri, not '\(entry)'")
            }
            if let index = clients.firstIndex(where: { $0.id == parts[0] }) {
                clients[index].redirectURIs.append(parts[1])
            } else {
                clients.append(OAuthClient(id: parts[0], redirectURIs: [parts[1]]))
            }
        }
        return clients
    }

    /// Refuses ids and redirect URIs that could never be used safely.
    func validate() throws {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        guard !id.isEmpty, id.count <= 128, id.unicodeScalars.allSatisfy({ $0.isASCII && allowed.contains($0) }) else {
            throw ConfigurationError("OAuth client id '\(id)' must be 1 to 128 characters of A-Z a-z 0-9 - . _ ~")
        }
        guard !redirectURIs.isEmpty else { throw ConfigurationError("OAuth client '\(id)' needs a redirect URI") }
        for uri in redirectURIs {
            guard let parsed = RedirectURI(uri) else {
                throw ConfigurationError(
                    "OAuth client '\(id)': redirect URI '\(uri)' must be absolute, without a fragment or user info")
            }
            if ["javascript", "data", "file", "vbscript", "about", "blob", "ftp", "ws", "wss"].contains(parsed.scheme) {
                throw ConfigurationError("OAuth client '\(id)': redirect URI '\(uri)' uses a scheme no app can receive")
            }
            if parsed.scheme == "http", !parsed.isLoopback {
                throw ConfigurationError(
                    "OAuth client '\(id)': redirect URI '\(uri)' uses http; only loopback IPs (127.0.0.1, [::1]) may")
            }
        }
    }
}

/// A redirect URI taken apart just enough to check it safely; compared through
/// `LoopbackRedirect.matchKey` (exact text, except the port of a loopback IP literal).
struct RedirectURI: Equatable {
    let text: String
    let scheme: String
    let isLoopback: Bool

    init?(_ text: String) {
        guard text.utf8.count <= 2048, !text.contains("#"),
            text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }),
            let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            components.user == nil, components.password == nil
        else { return nil }
        self.text = text
        self.scheme = scheme
        if scheme == "https" || scheme == "http" {
            guard let host = components.host, !host.isEmpty else { return nil }
        } else {
            // A private-use scheme (RFC 8252 §7.1): `com.example.app:/cb` or `myapp://auth`.
            guard scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else { return nil }
        }
        if let port = components.port, !(1...65_535).contains(port) { return nil }
        isLoopback = LoopbackRedirect.isLoopback(components)
    }

    /// Whether `presented` may be used where `self` is registered.
    func matches(_ presented: RedirectURI) -> Bool {
        LoopbackRedirect.matchKey(text) == LoopbackRedirect.matchKey(presented.text)
    }
}
