import Dispatch
import Foundation
import Synchronization
import VaporCSQLite

/// The SQLite file, driven through SQLite's C API (the copy sqlite-nio vendors) on one serial
/// queue: each store operation is one hop to that queue, where its whole transaction runs with
/// cached prepared statements, and one hop back.
///
/// Why not sqlite-nio's `query`: it hops to a thread pool and back, and prepares the statement
/// again, for every statement, so a sign-in of a dozen statements cost about forty thread
/// switches and most of the server's CPU (docs/performance.md).
final class SQLiteDatabase: Sendable {
    private let queue = DispatchQueue(label: "latchkey.sqlite")
    /// Touched only on `queue`; the mutex makes that provable to the compiler, never contended.
    private let connection: Mutex<SQLiteConnectionState?>

    private init(_ state: sending SQLiteConnectionState) { connection = Mutex(state) }

    /// Opens (creating) the database at `path`, or an in-memory one for `nil`.
    static func open(path: String?) async throws -> SQLiteDatabase {
        let database = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<SQLiteDatabase, any Error>) in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result { SQLiteDatabase(try SQLiteConnectionState(path: path ?? ":memory:")) })
            }
        }
        return database
    }

    /// Runs `body` on the database's queue, without a transaction (pragmas, `close`).
    func run<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnectionState) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            queue.async {
                continuation.resume(
                    with: Result {
                        try self.connection.withLock { state -> T in
                            guard let state else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "closed") }
                            return try body(state)
                        }
                    })
            }
        }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolled back on any error. Operations run one
    /// at a time, in submission order, so transactions never interleave.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnectionState) throws -> T) async throws -> T {
        try await run { state in
            try state.execute("BEGIN IMMEDIATE")
            do {
                let value = try body(state)
                try state.execute("COMMIT")
                return value
            } catch {
                try? state.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Finalizes statements and closes the file.
    func close() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async {
                self.connection.withLock { state in
                    state?.close()
                    state = nil
                }
                continuation.resume()
            }
        }
    }
}

/// A value read from or bound to a statement.
enum SQLiteValue: Sendable, Equatable {
    case integer(Int)
    case float(Double)
    case text(String)
    case blob(Data)
    case null

    var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }
    var integer: Int? {
        switch self {
        case .integer(let value): value
        case .float(let value): Int(value)
        default: nil
        }
    }
    var double: Double? {
        switch self {
        case .float(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }
    var blob: Data? {
        if case .blob(let value) = self { return value }
        return nil
    }
    var isNull: Bool { self == .null }
}

/// One result row: values by column name.
struct SQLiteRow {
    let names: [String]
    let values: [SQLiteValue]

    func column(_ name: String) -> SQLiteValue? {
        names.firstIndex(of: name).map { values[$0] }
    }
}

/// A SQLite error with SQLite's code and message.
struct SQLiteFailure: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "SQLite error \(code): \(message)" }
}

/// The open connection and its prepared statements; used only on `SQLiteDatabase`'s queue.
final class SQLiteConnectionState {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(path: String) throws {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        var opened: OpaquePointer?
        let status = sqlite_nio_sqlite3_open_v2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "open failed"
            sqlite_nio_sqlite3_close(opened)
            throw SQLiteFailure(code: status, message: message)
        }
        handle = opened
    }

    deinit { close() }

    func close() {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        statements = [:]
        if let handle { sqlite_nio_sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs a statement and returns its rows.
    @discardableResult
    func query(_ sql: String, _ binds: [SQLiteValue] = []) throws -> [SQLiteRow] {
        let statement = try prepared(sql)
        defer {
            sqlite_nio_sqlite3_reset(statement)
            sqlite_nio_sqlite3_clear_bindings(statement)
        }
        for (offset, value) in binds.enumerated() {
            try check(bind(value, at: Int32(offset + 1), of: statement))
        }
        var rows: [SQLiteRow] = []
        var names: [String]?
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { try check(status); break }
            let count = sqlite_nio_sqlite3_column_count(statement)
            if names == nil {
                names = (0..<count).map { String(cString: sqlite_nio_sqlite3_column_name(statement, $0)) }
            }
            rows.append(SQLiteRow(names: names ?? [], values: (0..<count).map { column($0, of: statement) }))
        }
        return rows
    }

    /// Runs a statement for its effect.
    func execute(_ sql: String, _ binds: [SQLiteValue] = []) throws { try query(sql, binds) }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        try check(
            sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil))
        guard let statement else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "empty statement: \(sql)") }
        statements[sql] = statement
        return statement
    }

    private func bind(_ value: SQLiteValue, at index: Int32, of statement: OpaquePointer) -> Int32 {
        switch value {
        case .integer(let number): return sqlite_nio_sqlite3_bind_int64(statement, index, Int64(number))
        case .float(let number): return sqlite_nio_sqlite3_bind_double(statement, index, number)
        case .text(let text):
            return sqlite_nio_sqlite3_bind_text64(
                statement, index, text, UInt64(text.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
        case .blob(let data):
            return data.withUnsafeBytes {
                sqlite_nio_sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), Self.transient)
            }
        case .null: return sqlite_nio_sqlite3_bind_null(statement, index)
        }
    }

    private func column(_ index: Int32, of statement: OpaquePointer) -> SQLiteValue {
        switch sqlite_nio_sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(Int(sqlite_nio_sqlite3_column_int64(statement, index)))
        case SQLITE_FLOAT: return .float(sqlite_nio_sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(statement, index) else { return .text("") }
            return .text(String(cString: text))
        case SQLITE_BLOB:
            let length = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
            guard let bytes = sqlite_nio_sqlite3_column_blob(statement, index), length > 0 else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: length))
        default: return .null
        }
    }

    private func check(_ status: Int32) throws {
        guard status == SQLITE_OK || status == SQLITE_ROW || status == SQLITE_DONE else {
            let message = handle.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? ""
            throw SQLiteFailure(code: status, message: message)
        }
    }
}
