import Foundation

extension ServerConfiguration {
    /// Listening, connections and requests (`Setting.Group.http`).
    package struct HTTPSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.http
        /// Address to bind.
        package var host: String = "127.0.0.1"
        /// Port to bind; 0 picks a free one.
        package var port: Int = 8080
        /// The base URL clients reach the server at; the `iss` of access tokens. Defaults to
        /// `http://host:port`.
        package var publicURL: String?
        /// Largest request body, bytes.
        package var maximumBodySize: Int = 64 * 1024
        /// Longest a client may take to send a request's body after its head, seconds
        /// (`LATCHKEY_REQUEST_TIMEOUT`); a slower connection is closed.
        package var requestTimeout: TimeInterval = 10
        /// Longest a new connection may take to send its first request's head, seconds
        /// (`LATCHKEY_FIRST_REQUEST_TIMEOUT`; at most the idle timeout): a client that connects and
        /// sends nothing is holding a connection, not using it.
        package var firstRequestTimeout: TimeInterval = 10
        /// Longest a keep-alive connection may wait for its next request's head after a response,
        /// seconds (`LATCHKEY_IDLE_TIMEOUT`): partial bytes do not extend it.
        package var idleTimeout: TimeInterval = 75
        /// Most connections open at once; beyond, new ones are closed at once and a warning is
        /// logged (`LATCHKEY_MAX_CONNECTIONS`). Keep it under the process's file-descriptor limit.
        package var maximumConnections: Int = 4096
        /// Most connections open at once from one client address (IPv6: one /64); beyond, new ones
        /// are closed at once (`LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS`; 0 turns it off). Counted on
        /// the TCP peer: connections from `trustedProxies` count only against `maximumConnections`.
        package var maximumConnectionsPerAddress: Int = 64
        /// Networks of reverse proxies whose `Forwarded`/`X-Forwarded-For` headers name the client
        /// (CIDR, `LATCHKEY_TRUSTED_PROXIES`); none by default, as any client can send those headers.
        package var trustedProxies: [String] = []
        /// The header those proxies write the client into: `x-forwarded-for` or `forwarded`
        /// (`LATCHKEY_FORWARDED_HEADER`). Only that one is read.
        package var forwardedHeader: String = "x-forwarded-for"
        /// This server's name in the audit log (`LATCHKEY_NODE_NAME`): which node served what.
        package var nodeName: String = Self.hostNodeName

        /// The host name as a node name: its allowed characters, at most 64 (a default must never
        /// fail the check a setting gets).
        static var hostNodeName: String {
            let kept = String(
                ProcessInfo.processInfo.hostName.filter {
                    $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0))
                }
                .prefix(64))
            return kept.isEmpty ? "latchkey" : kept
        }

        /// The base URL, trailing slash removed.
        package var resolvedPublicURL: String {
            let url = publicURL ?? "http://\(host):\(port)"
            return url.hasSuffix("/") ? String(url.dropLast()) : url
        }

        /// Refuses values that cannot work, naming the setting; `shown` quotes a value for the
        /// error (or only where it came from, for a `_FILE`).
        func validate(_ shown: (String, String) -> String) throws {
            if publicURL == nil, ["0.0.0.0", "::", "[::]"].contains(host) {
                throw ConfigurationError(
                    "LATCHKEY_PUBLIC_URL is required when LATCHKEY_HOST is a wildcard address: it is the issuer of access tokens"
                )
            }
            guard (0...65_535).contains(port) else { throw ConfigurationError("LATCHKEY_PORT \(port) is out of range") }
            try ServerConfiguration.validateHTTPURL("LATCHKEY_PUBLIC_URL", resolvedPublicURL, shown)
            guard !nodeName.isEmpty, nodeName.utf8.count <= 64,
                nodeName.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) })
            else {
                throw ConfigurationError(
                    "LATCHKEY_NODE_NAME must be 1 to 64 letters, digits, dots, dashes or underscores")
            }
            guard maximumBodySize >= 1024 else {
                throw ConfigurationError("LATCHKEY_MAX_BODY_BYTES must be at least 1024")
            }
            guard requestTimeout > 0, requestTimeout <= 600, idleTimeout > 0, idleTimeout <= 3600 else {
                throw ConfigurationError(
                    "LATCHKEY_REQUEST_TIMEOUT (up to 600) and LATCHKEY_IDLE_TIMEOUT (up to 3600) must be positive seconds"
                )
            }
            guard firstRequestTimeout > 0, firstRequestTimeout <= 3600 else {
                throw ConfigurationError("LATCHKEY_FIRST_REQUEST_TIMEOUT must be positive seconds, up to 3600")
            }
            guard (1...1_000_000).contains(maximumConnections) else {
                throw ConfigurationError("LATCHKEY_MAX_CONNECTIONS must be between 1 and 1000000")
            }
            guard (0...1_000_000).contains(maximumConnectionsPerAddress) else {
                throw ConfigurationError("LATCHKEY_MAX_CONNECTIONS_PER_ADDRESS must be between 0 (no cap) and 1000000")
            }
            guard ClientAddress.ForwardedHeader(rawValue: forwardedHeader) != nil else {
                throw ConfigurationError("LATCHKEY_FORWARDED_HEADER must be x-forwarded-for or forwarded")
            }
            for network in trustedProxies where ClientAddress.Network(network) == nil {
                throw ConfigurationError(
                    "LATCHKEY_TRUSTED_PROXIES entry \(shown("LATCHKEY_TRUSTED_PROXIES", network)) is not an address or CIDR network"
                )
            }
        }
    }
}
