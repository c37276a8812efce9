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
    /// The driver remembers a failed preparation on its connection and fails every later run of
    /// that statement there with the same error, without asking the server again: a lock timeout
    /// during a migration, a cancelled Parse or a changed result type would then fail on that
    /// connection for as long as it lives. So a server error that is not about the values (data,
    /// constraint, transaction conflict, our own refusal) closes the connection, and the pool
    /// opens a fresh one, as it would after the text statements this replaced.
    func rows<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] {
        do {
            var rows: [Statement.Row] = []
            for try await row in try await execute(statement, logger: PostgresStore.quiet) { rows.append(row) }
            return rows
        } catch let error as PSQLError where error.code == .server {
            let state = error.serverInfo?[.sqlState] ?? ""
            if !(state.hasPrefix("22") || state.hasPrefix("23") || state.hasPrefix("40") || state == "LK001") {
                // Waited for, so the pool never lends it again while it is closing.
                try? await close()
            }
            throw error
        }
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
