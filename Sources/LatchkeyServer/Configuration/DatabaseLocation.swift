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
            throw ConfigurationError("LATCHKEY_DATABASE_URL '\(url)' is neither an SQLite path nor a supported URL")
        }
        self = .sqliteFile(path)
    }
}
