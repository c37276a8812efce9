import Foundation
import HTTPTypes
import NIOCore

/// Where the database lives, parsed from `LATCHKEY_DATABASE_URL`.
public enum DatabaseLocation: Sendable, Equatable {
    /// An SQLite file.
    case sqliteFile(String)
    /// An in-memory SQLite database (tests).
    case sqliteMemory

    /// Parses `sqlite::memory:`, `sqlite:PATH`, `sqlite://PATH`, `file:PATH` or a bare path.
    public init(_ url: String) throws {
        if url == "sqlite::memory:" || url == ":memory:" {
            self = .sqliteMemory
            return
        }
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            throw ConfigurationError("PostgreSQL is not supported yet; use an SQLite path in LATCHKEY_DATABASE_URL")
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

    /// `url` safe to print: a password in its user information (`scheme://user:password@host`) or
    /// in a `password=` parameter is replaced with `***`.
    public static func redacted(_ url: String) -> String {
        var text = url
        if let schemeEnd = text.range(of: "://") {
            let authorityEnd = text[schemeEnd.upperBound...].firstIndex(where: { "/?#".contains($0) }) ?? text.endIndex
            let authority = text[schemeEnd.upperBound..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                text.replaceSubrange(text.index(after: colon)..<at, with: "***")
            }
        }
        if let query = text.firstIndex(of: "?") {
            let pairs = text[text.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map {
                pair -> String in
                pair.lowercased().hasPrefix("password=") ? "password=***" : String(pair)
            }
            text = String(text[...query]) + pairs.joined(separator: "&")
        }
        return text
    }
}
