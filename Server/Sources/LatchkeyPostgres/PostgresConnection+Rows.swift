import Foundation
import Logging
import NIOCore
import PostgresNIO

extension PostgresConnection {
    /// Runs `query` and returns every row (the store's answers are a handful of rows at most).
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await self.query(query, logger: PostgresStore.quiet).collect()
    }

    /// Runs a prepared statement and returns every row, decoded.
    ///
    /// A failed preparation stays on its connection (the driver answers it again without asking
    /// the server); `PostgresStore.leavesConnectionUsable` closes such a connection.
    func rows<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] {
        var rows: [Statement.Row] = []
        for try await row in try await execute(statement, logger: PostgresStore.quiet) { rows.append(row) }
        return rows
    }

    /// Runs `query`, discarding any rows.
    func run(_ query: PostgresQuery) async throws {
        _ = try await rows(query)
    }
}

/// A statement put together from parts, with its values bound as `$n` parameters (never
/// written into the text).
struct StatementBuilder {
    var binds = PostgresBindings()

    /// Binds `value` and returns its placeholder.
    mutating func bind<Value: PostgresNonThrowingEncodable>(_ value: Value) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    /// Binds `value`, or `NULL` of its type for `nil`, and returns its placeholder.
    mutating func bind<Value: PostgresNonThrowingEncodable>(_ value: Value?) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    /// Binds bytes as `bytea`.
    mutating func bind(_ value: Data) -> String { bind(ByteBuffer(bytes: value)) }

    /// The statement `sql` with the values bound so far.
    func query(_ sql: String) -> PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: binds) }
}

/// Dates as PostgreSQL keeps them: `timestamptz` holds microseconds, and the driver truncates, so
/// what a store operation returns without reading it back must be truncated the same way to equal
/// what a later read returns.
enum PostgresTime {
    static func stored(_ date: Date) -> Date {
        let epoch = Date(timeIntervalSince1970: 946_684_800)
        let microseconds = Int64(date.timeIntervalSince(epoch) * 1_000_000)
        return Date(timeInterval: Double(microseconds) / 1_000_000, since: epoch)
    }
}
