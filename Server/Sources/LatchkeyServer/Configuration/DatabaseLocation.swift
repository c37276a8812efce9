import Foundation
import HTTPTypes
import NIOCore

/// Where the database lives, parsed from `LATCHKEY_DATABASE_URL`.
package enum DatabaseLocation: Sendable, Equatable {
    /// An SQLite file.
    case sqliteFile(String)
    /// An in-memory SQLite database (tests).
    case sqliteMemory
    /// A PostgreSQL database, shared by any number of servers.
    case postgres(PostgresURL)

    /// Parses `sqlite::memory:`, `sqlite:PATH`, `sqlite://PATH`, `file:PATH`, a bare path, or
    /// `postgres://user:password@host:port/database?sslmode=…` (also `postgresql://`).
    package init(_ url: String) throws {
        if url == "sqlite::memory:" || url == ":memory:" {
            self = .sqliteMemory
            return
        }
        if url.lowercased().hasPrefix("postgres://") || url.lowercased().hasPrefix("postgresql://") {
            self = .postgres(try PostgresURL(url))
            return
        }
        var path = url
        for prefix in ["sqlite://", "sqlite:", "file://", "file:"] where path.hasPrefix(prefix) {
            path = String(path.dropFirst(prefix.count))
            break
        }
        guard !path.isEmpty, !path.contains("://") else {
            throw ConfigurationError(
                "LATCHKEY_DATABASE_URL '\(Self.redacted(url))' is neither an SQLite path nor a supported URL")
        }
        self = .sqliteFile(path)
    }

    /// The location as it may be printed: a path, or the PostgreSQL URL without its password.
    package var displayName: String {
        switch self {
        case .sqliteFile(let path): Self.redacted(path)
        case .sqliteMemory: "sqlite::memory:"
        case .postgres(let url): url.description
        }
    }

    /// The location as the start-up banner prints it: a relative SQLite path made absolute against
    /// the working directory (so an operator sees where the data really is), otherwise as
    /// `displayName`.
    package var resolvedDisplayName: String {
        guard case .sqliteFile(let path) = self, !path.hasPrefix("/") else { return displayName }
        let directory = FileManager.default.currentDirectoryPath
        return Self.redacted((directory == "/" ? "" : directory) + "/" + path)
    }

    /// `url` safe to print: the user information (`scheme://user:password@host`, up to the last
    /// `@`, since a password may hold `/`, `?` or `#`) keeps only the user name, and the values of
    /// query parameters that can hold a secret (`password`, `pwd`, `sslpassword`, `token`,
    /// `secret`, `key`…) become `***`. Also for a scheme-less `user:password@host`.
    package static func redacted(_ url: String) -> String {
        var text = url
        let authorityStart = text.range(of: "://")?.upperBound ?? text.startIndex
        if let at = text[authorityStart...].lastIndex(of: "@") {
            let userInfo = text[authorityStart..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                text.replaceSubrange(text.index(after: colon)..<at, with: "***")
            } else if text.range(of: "://") != nil {
                // A lone user name can be a token (`https://TOKEN@host`).
                text.replaceSubrange(authorityStart..<at, with: "***")
            }
        }
        guard let query = text.firstIndex(of: "?") else { return text }
        let secretNames = ["pass", "pwd", "secret", "token", "key", "auth"]
        let pairs = text[text.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map {
            pair -> String in
            let name = pair.split(separator: "=", maxSplits: 1).first.map { $0.lowercased() } ?? ""
            guard pair.contains("="), secretNames.contains(where: { name.contains($0) }) else { return String(pair) }
            return "\(name)=***"
        }
        return String(text[...query]) + pairs.joined(separator: "&")
    }
}
