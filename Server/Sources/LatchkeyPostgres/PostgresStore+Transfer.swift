import Foundation
import LatchkeyServer
import NIOCore
import PostgresNIO

extension PostgresStore: TransferDestination {
    /// One multi-row `INSERT … ON CONFLICT DO NOTHING` per call (audit ids kept as they were).
    package func transferInsert(_ table: TransferTable, rows: [[TransferValue]]) async throws -> Int {
        guard !rows.isEmpty else { return 0 }
        var b = StatementBuilder()
        let tuples = rows.map { row in
            "("
                + zip(table.columns, row).map { column, value -> String in
                    switch value {
                    case .null: return "NULL"
                    case .text(let text): return column.kind == .json ? "\(b.bind(text))::json" : b.bind(text)
                    case .date(let date): return b.bind(date)
                    case .bytes(let bytes): return b.bind(bytes)
                    case .bool(let flag): return b.bind(flag)
                    case .integer(let number): return b.bind(number)
                    }
                }.joined(separator: ", ") + ")"
        }
        let columns = table.columns.map(\.name).joined(separator: ", ")
        let overriding = table.name == "audit_events" ? " OVERRIDING SYSTEM VALUE" : ""
        let sql = """
            WITH added AS (INSERT INTO \(table.name) (\(columns))\(overriding) VALUES \(tuples.joined(separator: ", "))
                ON CONFLICT DO NOTHING RETURNING 1)
            SELECT count(*) FROM added
            """
        let query = b.query(sql)
        return try await withConnection("copy rows") { connection in
            try await connection.rows(query).first?.decode(Int.self) ?? 0
        }
    }

    /// `count(*)` of `table`.
    package func transferCount(_ table: TransferTable) async throws -> Int {
        try await withConnection("count rows") { connection in
            try await connection.rows(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table.name)")).first?.decode(
                Int.self) ?? 0
        }
    }

    /// New audit events continue after the copied ids.
    package func transferFinished() async throws {
        try await withConnection("copy finished") { connection in
            try await connection.run(
                """
                SELECT setval(pg_get_serial_sequence('audit_events', 'id'), newest)
                FROM (SELECT MAX(id) AS newest FROM audit_events) AS copied WHERE newest IS NOT NULL
                """)
        }
    }
}
