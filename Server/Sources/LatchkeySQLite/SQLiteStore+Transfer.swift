import Foundation
import LatchkeyServer

extension SQLiteStore: TransferSource {
    /// Rows by `rowid`, so each page is one index range however large the table.
    package func transferRows(
        _ table: TransferTable, after: Int, limit: Int
    ) async throws -> (
        rows: [[TransferValue]], next: Int
    ) {
        let columns = table.columns.map(\.name).joined(separator: ", ")
        return try await transaction { db in
            let found = try db.query(
                "SELECT rowid AS transfer_rowid, \(columns) FROM \(table.name) WHERE rowid > ? ORDER BY rowid LIMIT ?",
                [.integer(after), .integer(limit)])
            let rows = found.map { row in
                table.columns.map { column -> TransferValue in
                    let value = row.column(column.name) ?? .null
                    if value.isNull { return .null }
                    switch column.kind {
                    case .text, .json: return .text(value.string ?? "")
                    case .date: return .date(Date(timeIntervalSince1970: value.double ?? 0))
                    case .bytes: return .bytes(value.blob ?? Data())
                    case .bool: return .bool((value.integer ?? 0) != 0)
                    case .integer: return .integer(value.integer ?? 0)
                    }
                }
            }
            return (rows, found.last?.column("transfer_rowid")?.integer ?? after)
        }
    }

    /// `COUNT(*)` of `table`.
    package func transferCount(_ table: TransferTable) async throws -> Int {
        try await transaction { db in
            try db.query("SELECT COUNT(*) AS n FROM \(table.name)").first?.column("n")?.integer ?? 0
        }
    }
}
