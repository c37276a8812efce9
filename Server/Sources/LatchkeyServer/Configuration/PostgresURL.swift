import Foundation

/// A PostgreSQL connection parsed from `postgres://user:password@host:port/database?sslmode=…`.
///
/// Only what Latchkey acts on is accepted; an unknown parameter is an error rather than silently
/// ignored, since a misspelt `sslmode` would otherwise connect without the TLS it asked for.
/// `description` never contains the password.
package struct PostgresURL: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// How the connection is protected, libpq's names for the modes Latchkey offers.
    package enum TLSMode: String, Sendable, Equatable, CaseIterable {
        /// Plain TCP. For a database on loopback or a private network the operator trusts.
        case disable
        /// TLS, without checking the server's certificate: protects from listeners, not from a
        /// machine in the middle.
        case require
        /// TLS, the certificate checked against the trusted roots (or `sslrootcert`) and the host
        /// name. The default for every host but loopback.
        case verifyFull = "verify-full"
    }

    /// The role to connect as.
    package var user: String
    /// Its password; `nil` when the server trusts the connection without one.
    package var password: String?
    /// Host name or address.
    package var host: String
    /// TCP port.
    package var port: Int
    /// Database name.
    package var database: String
    /// TLS mode (`sslmode`).
    package var tls: TLSMode
    /// A PEM file of the certificate authorities to trust with `verify-full` (`sslrootcert`),
    /// instead of the system's; cloud databases usually need their provider's bundle.
    package var rootCertificatePath: String?
    /// Seconds to wait for a connection to open (`connect_timeout`); `nil` for the server's
    /// general database timeout.
    package var connectTimeout: Int?
    /// Server settings for each connection (libpq's `options`, e.g. `-c search_path=latchkey`).
    package var options: String?
    /// Shown in `pg_stat_activity` (`application_name`).
    package var applicationName: String

    /// Parses `url`; the error never repeats the password.
    package init(_ url: String) throws {
        guard let schemeEnd = url.range(of: "://"),
            ["postgres", "postgresql"].contains(url[..<schemeEnd.lowerBound].lowercased())
        else { throw Self.invalid(url, "it must start with postgres://") }
        var rest = Substring(url[schemeEnd.upperBound...])
        var query = Substring("")
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        // The user information ends at the last `@`: a password may hold `@`, `/` or `:`.
        var userInfo = Substring("")
        if let at = rest.lastIndex(of: "@") {
            userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
        }
        let authority: Substring
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            guard let name = String(rest[rest.index(after: slash)...]).removingPercentEncoding, !name.isEmpty else {
                throw Self.invalid(url, "it names no database (postgres://user:password@host:5432/DATABASE)")
            }
            database = name
        } else {
            throw Self.invalid(url, "it names no database (postgres://user:password@host:5432/DATABASE)")
        }
        let (host, port) = try Self.hostAndPort(authority, url: url)
        self.host = host
        self.port = port
        if let colon = userInfo.firstIndex(of: ":") {
            user = String(userInfo[..<colon]).removingPercentEncoding ?? ""
            // A bad escape must not silently become "no password".
            guard let decoded = String(userInfo[userInfo.index(after: colon)...]).removingPercentEncoding else {
                throw Self.invalid(url, "the password holds a '%' that is not an escape (write % as %25)")
            }
            password = decoded
        } else {
            user = String(userInfo).removingPercentEncoding ?? ""
            password = nil
        }
        guard !user.isEmpty else { throw Self.invalid(url, "it names no user (postgres://USER:password@host/db)") }
        tls = Self.isLoopback(host) ? .disable : .verifyFull
        applicationName = "latchkey"
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? "") : ""
            switch name {
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw Self.invalid(
                        url,
                        "sslmode must be \(TLSMode.allCases.map(\.rawValue).joined(separator: ", ")) (libpq's prefer, "
                            + "allow and verify-ca are not offered: each can connect without checking who answers)")
                }
                tls = mode
            case "sslrootcert": rootCertificatePath = value
            case "connect_timeout":
                guard let seconds = Int(value), (1...600).contains(seconds) else {
                    throw Self.invalid(url, "connect_timeout must be whole seconds between 1 and 600")
                }
                connectTimeout = seconds
            case "options": options = value
            case "application_name": applicationName = value
            default:
                throw Self.invalid(
                    url,
                    "unknown parameter '\(name.prefix(40))' (known: sslmode, sslrootcert, connect_timeout, options, "
                        + "application_name)")
            }
        }
        if rootCertificatePath != nil, tls != .verifyFull {
            throw Self.invalid(url, "sslrootcert is only used with sslmode=verify-full")
        }
    }

    /// The URL without its password, for logs and messages.
    package var description: String {
        let credentials = user.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? user
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(credentials)\(password == nil ? "" : ":***")@\(shownHost):\(port)/\(database)"
            + "?sslmode=\(tls.rawValue)"
    }

    /// The same as `description`: the password never prints.
    package var debugDescription: String { description }

    /// The URL without its password, for `dump` and reflection.
    package var customMirror: Mirror { Mirror(self, children: ["url": description]) }

    /// Whether `host` is a literal loopback address (127.0.0.0/8, `::1` in any spelling), where
    /// TLS protects nothing and is off by default. Not the name `localhost`: what it resolves to is
    /// up to `/etc/hosts` and the resolver (a container's, say), so it gets TLS like any name.
    static func isLoopback(_ host: String) -> Bool {
        var address = in6_addr()
        if host.contains(":") {
            guard inet_pton(AF_INET6, host, &address) == 1 else { return false }
            return withUnsafeBytes(of: &address) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
        }
        // An address in 127.0.0.0/8 as inet_pton reads it (four decimal parts, no leading zeros),
        // not a name that merely starts with "127." and that the resolver would send to DNS.
        var v4 = in_addr()
        guard inet_pton(AF_INET, host, &v4) == 1 else { return false }
        return withUnsafeBytes(of: &v4) { $0.first == 127 }
    }

    private static func hostAndPort(_ authority: Substring, url: String) throws -> (String, Int) {
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid(url, "an IPv6 host lacks its ']'") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw invalid(url, "it names no host") }
        var port = 5432
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw invalid(url, "the port must be a number between 1 and 65535")
            }
            port = number
        }
        return (String(host), port)
    }

    private static func invalid(_ url: String, _ reason: String) -> ConfigurationError {
        ConfigurationError("LATCHKEY_DATABASE_URL '\(DatabaseLocation.redacted(url))' is not usable: \(reason)")
    }
}
