import Foundation

/// Moving an installation between backends (`latchkey db copy`): every table, column for column,
/// described once here so each backend only reads or writes its own representation (SQLite keeps
/// dates as seconds in a REAL and booleans as 0/1; PostgreSQL as `timestamptz` and `boolean`).
package struct TransferTable: Sendable, Equatable {
    /// How a column's value travels.
    package enum Kind: Sendable, Equatable {
        case text, json, date, bytes, bool, integer
    }

    /// A column and its kind.
    package struct Column: Sendable, Equatable {
        /// The column's name, the same in every backend.
        package let name: String
        /// How it travels.
        package let kind: Kind
    }

    /// The table's name, the same in every backend.
    package let name: String
    /// Its columns, in the order `TransferValue` rows carry them.
    package let columns: [Column]

    init(_ name: String, _ columns: [(String, Kind)]) {
        self.name = name
        self.columns = columns.map { Column(name: $0.0, kind: $0.1) }
    }

    /// Every table, parents before children (foreign keys hold at every step). All rows move,
    /// short-lived ones included: a `jti` spent just before the move must stay spent after it, and
    /// an Easy Login in progress must still complete.
    package static let all: [TransferTable] = [
        TransferTable(
            "users",
            [
                ("id", .text), ("created_at", .date), ("updated_at", .date), ("disabled", .bool),
                ("properties", .json), ("anonymous", .bool),
            ]),
        TransferTable(
            "identities",
            [
                ("provider", .text), ("subject", .text), ("app_id", .text), ("user_id", .text), ("granted", .json),
                ("first_seen", .date), ("last_seen", .date), ("business_token", .text), ("revoked_at", .date),
                ("email_disabled", .bool),
            ]),
        TransferTable(
            "sessions",
            [
                ("id", .text), ("user_id", .text), ("created_at", .date), ("expires_at", .date), ("revoked_at", .date),
                ("authenticated_at", .date), ("method", .text), ("provider", .text), ("subject", .text),
                ("client_address", .text), ("user_agent", .text), ("refreshed_at", .date), ("second_factor", .text),
                ("stepped_up_at", .date),
            ]),
        TransferTable(
            "refresh_tokens",
            [
                ("hash", .bytes), ("session_id", .text), ("created_at", .date), ("expires_at", .date),
                ("used_at", .date), ("successor_hash", .bytes), ("reissued_at", .date),
            ]),
        TransferTable("single_use", [("kind", .text), ("value", .text), ("expires_at", .date)]),
        TransferTable("nonces", [("value", .text), ("expires_at", .date)]),
        TransferTable(
            "signing_keys", [("kid", .text), ("private_key", .bytes), ("created_at", .date), ("retired_at", .date)]),
        TransferTable(
            "audit_events",
            [
                ("id", .integer), ("at", .date), ("type", .text), ("user_id", .text), ("detail", .json),
                ("node", .text), ("client_address", .text), ("user_agent", .text),
            ]),
        TransferTable(
            "pending_authorizations", [("handle_hash", .bytes), ("request", .json), ("expires_at", .date)]),
        TransferTable(
            "authorization_codes",
            [
                ("hash", .bytes), ("client_id", .text), ("redirect_uri", .text), ("code_challenge", .text),
                ("user_id", .text), ("session_id", .text), ("scope", .json), ("created_at", .date),
                ("expires_at", .date), ("used_at", .date), ("redeemed", .bool), ("provider", .text),
                ("subject", .text), ("second_factor", .text),
            ]),
        TransferTable(
            "deletion_requests",
            [
                ("id", .text), ("code", .text), ("provider", .text), ("subject", .text), ("app_id", .text),
                ("user_id", .text), ("policy", .text), ("property_keys", .json), ("status", .text), ("reason", .text),
                ("held_data", .bool), ("created_at", .date), ("updated_at", .date),
            ]),
        TransferTable(
            "provider_tokens",
            [("provider", .text), ("subject", .text), ("client_id", .text), ("token", .bytes), ("updated_at", .date)]),
        TransferTable(
            "jobs",
            [
                ("id", .text), ("kind", .text), ("user_id", .text), ("payload", .json), ("created_at", .date),
                ("due_at", .date), ("attempts", .integer), ("lease_until", .date), ("last_error", .text),
            ]),
        TransferTable(
            "factors",
            [
                ("id", .text), ("user_id", .text), ("type", .text), ("display_name", .text), ("secret", .bytes),
                ("created_at", .date), ("activated_at", .date), ("last_step", .integer), ("last_used_at", .date),
                ("failed_verifications", .integer),
            ]),
        TransferTable(
            "recovery_codes",
            [("user_id", .text), ("hash", .bytes), ("created_at", .date), ("used_at", .date), ("salt", .text)]),
        TransferTable(
            "factor_challenges",
            [
                ("hash", .bytes), ("user_id", .text), ("purpose", .text), ("session_id", .text), ("plan", .text),
                ("created_at", .date), ("expires_at", .date), ("attempts", .integer), ("spent_at", .date),
            ]),
        TransferTable("factor_lockouts", [("user_id", .text), ("failures", .integer), ("locked_until", .date)]),
        TransferTable(
            "admin_keys",
            [
                ("id", .text), ("name", .text), ("hash", .bytes), ("created_at", .date), ("last_used_at", .date),
                ("revoked_at", .date), ("console_generation", .integer),
            ]),
    ]
}

/// One column's value in transit.
package enum TransferValue: Sendable, Equatable {
    case text(String)
    case date(Date)
    case bytes(Data)
    case bool(Bool)
    case integer(Int)
    case null
}

/// A backend rows can be copied from.
package protocol TransferSource: Sendable {
    /// Up to `limit` rows of `table` after position `after` (0 first), in a stable order, and
    /// the position to continue from.
    func transferRows(
        _ table: TransferTable, after: Int, limit: Int
    ) async throws -> (
        rows: [[TransferValue]], next: Int
    )
    /// How many rows `table` holds.
    func transferCount(_ table: TransferTable) async throws -> Int
}

/// A backend rows can be copied into.
package protocol TransferDestination: Sendable {
    /// Inserts `rows`, skipping any whose key is already present (a copy run again adds nothing);
    /// returns how many were new.
    func transferInsert(_ table: TransferTable, rows: [[TransferValue]]) async throws -> Int
    /// How many rows `table` holds.
    func transferCount(_ table: TransferTable) async throws -> Int
    /// Called once every table is copied (PostgreSQL moves the audit log's id sequence past the
    /// copied ids).
    func transferFinished() async throws
}
