import Dispatch
import Foundation
import LatchkeyServer
import Synchronization
import VaporCSQLite

/// The SQLite file, driven through SQLite's C API (the copy sqlite-nio vendors) on one serial
/// queue, with group commit: transactions submitted while the queue is busy run together inside
/// one `BEGIN IMMEDIATE … COMMIT`, each in its own savepoint.
///
/// Why not sqlite-nio's `query`: it hops to a thread pool and back, and prepares the statement
/// again, for every statement, so a sign-in of a dozen statements cost about forty thread
/// switches and most of the server's CPU (docs/performance.md).
///
/// Why group commit: a commit writes every page the transaction touched to the WAL, and the
/// checkpoint copies them back with an `fsync`; together a fifth of a Limited Login's CPU. Sign-ins
/// in one batch share the pages at the tail of the rowid tables and of the time-ordered indexes
/// (`audit_events`, the expiry index of `single_use`), which a batch writes once, and the batch
/// pays one commit's fixed cost. Each caller still sees its own transaction: operations run one
/// at a time in submission order, a failing one is rolled back to its savepoint without touching
/// the others, and no caller is answered before the batch's `COMMIT` has succeeded.
final class SQLiteDatabase: Sendable {
    /// At most this many transactions share one commit, so one batch never holds the queue long.
    static let maximumBatch = 64

    private let queue = DispatchQueue(label: "latchkey.sqlite")
    /// Told each commit's size (the store's, `SQLiteStore.observation`).
    let observation = StoreObservation()
    /// Touched only on `queue`; the mutex makes that provable to the compiler, never contended.
    private let connection: Mutex<SQLiteConnectionState?>
    /// Transactions waiting for the queue, and whether a drain is already scheduled on it.
    private let waiting = Mutex(Waiting())

    private struct Waiting {
        var jobs: [Job] = []
        var drainScheduled = false
        var commits = 0
    }

    /// Transactions submitted and not yet started (tests use it to form a batch on purpose).
    var waitingCount: Int { waiting.withLock { $0.jobs.count } }
    /// `COMMIT`s run so far, each covering one batch.
    var commitCount: Int { waiting.withLock { $0.commits } }

    /// One submitted transaction body, with how to answer its caller.
    private struct Job: Sendable {
        /// Runs the body inside the batch's transaction; returns the caller's answer, to be given
        /// only once the batch has committed.
        let run: @Sendable (SQLiteConnectionState) throws -> @Sendable () -> Void
        /// Answers the caller with an error.
        let fail: @Sendable (any Error) -> Void
    }

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
                            guard let state else { throw SQLiteFailure.closed }
                            return try body(state)
                        }
                    })
            }
        }
    }

    /// Runs `body` as its own transaction: everything it wrote is committed before this returns,
    /// or nothing is, when it (or the commit) throws. Transactions run one at a time, in
    /// submission order, possibly sharing a commit with others (group commit).
    func transaction<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnectionState) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            submit(
                Job(
                    run: { state in
                        let value = try body(state)
                        return { continuation.resume(returning: value) }
                    },
                    fail: { continuation.resume(throwing: $0) }))
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

    private func submit(_ job: Job) {
        let schedule = waiting.withLock { waiting -> Bool in
            waiting.jobs.append(job)
            guard !waiting.drainScheduled else { return false }
            waiting.drainScheduled = true
            return true
        }
        if schedule { queue.async { self.drain() } }
    }

    /// Runs one batch of the waiting transactions, then schedules itself again behind anything else
    /// submitted to the queue meanwhile (`close`, pragmas), so those never starve under load.
    private func drain() {
        let batch = waiting.withLock { waiting -> [Job] in
            let count = min(waiting.jobs.count, Self.maximumBatch)
            let batch = Array(waiting.jobs.prefix(count))
            waiting.jobs.removeFirst(count)
            return batch
        }
        connection.withLock { state in
            guard let state else {
                for job in batch { job.fail(SQLiteFailure.closed) }
                return
            }
            Self.commit(batch[...], state, database: self)
        }
        let more = waiting.withLock { waiting -> Bool in
            waiting.drainScheduled = !waiting.jobs.isEmpty
            return waiting.drainScheduled
        }
        if more { queue.async { self.drain() } }
    }

    /// Runs `batch` in one transaction and answers every caller.
    private static func commit(_ batch: ArraySlice<Job>, _ state: SQLiteConnectionState, database: SQLiteDatabase) {
        guard let first = batch.first else { return }
        do {
            try state.execute("BEGIN IMMEDIATE")
        } catch {
            for job in batch { job.fail(error) }
            return
        }
        // Callers whose work is in the transaction, answered after COMMIT.
        var done: [(answer: @Sendable () -> Void, fail: @Sendable (any Error) -> Void)] = []
        if batch.count == 1 {
            // Alone: the transaction is the job's, no savepoint needed.
            do {
                done.append((try first.run(state), first.fail))
            } catch {
                state.rollBack()
                first.fail(error)
                return
            }
        } else {
            for (offset, job) in zip(batch.indices, batch) {
                do {
                    try state.execute("SAVEPOINT job")
                    let answer = try job.run(state)
                    try state.execute("RELEASE job")
                    done.append((answer, job.fail))
                } catch {
                    // Undo only this job's writes. SQLite rolls a whole transaction back by itself
                    // after some errors (disk full, I/O); then the savepoint is gone, the work of
                    // the jobs before is lost too, and they must hear so.
                    if state.isInTransaction, (try? state.execute("ROLLBACK TO job")) != nil,
                        (try? state.execute("RELEASE job")) != nil
                    {
                        job.fail(error)
                        continue
                    }
                    state.rollBack()
                    job.fail(error)
                    for earlier in done { earlier.fail(error) }
                    commit(batch[(offset + 1)...], state, database: database)
                    return
                }
            }
        }
        do {
            guard state.isInTransaction else { throw SQLiteFailure(code: SQLITE_ABORT, message: "transaction lost") }
            try state.execute("COMMIT")
            database.waiting.withLock { $0.commits += 1 }
            database.observation.groupCommit(transactions: done.count)
        } catch {
            state.rollBack()
            for job in done { job.fail(error) }
            return
        }
        for job in done { job.answer() }
    }
}

/// A value read from or bound to a statement.
enum SQLiteValue: Sendable, Equatable {
    case integer(Int)
    case float(Double)
    case text(String)
    case blob(Data)
    case null

    /// Text, or `NULL` for `nil`.
    static func optionalText(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }

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

    /// The database was closed before the operation ran.
    static let closed = SQLiteFailure(code: SQLITE_MISUSE, message: "closed")
}

/// The open connection and its prepared statements; used only on `SQLiteDatabase`'s queue.
final class SQLiteConnectionState {
    /// The context of the transaction running now, for the audit rows it writes: the caller's
    /// task-local `AuditContext`, which this queue's thread does not see (`SQLiteStore.transaction`).
    var auditContext = AuditContext(node: nil, client: .unknown)
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

    /// Whether a transaction is open (SQLite is not in autocommit mode).
    var isInTransaction: Bool { handle.map { sqlite_nio_sqlite3_get_autocommit($0) == 0 } ?? false }

    /// Rolls back the open transaction, if any; errors are moot, as nothing is kept either way.
    func rollBack() {
        if isInTransaction { try? execute("ROLLBACK") }
    }

    /// How many times SQLite re-prepared each cached statement (`SQLITE_STMTSTATUS_REPREPARE`).
    ///
    /// A statement whose plan depends on a bound value is compiled again on every new binding,
    /// which silently defeats the statement cache; tests keep this at zero for the store's queries.
    var reprepareCounts: [String: Int] {
        statements.mapValues { Int(sqlite_nio_sqlite3_stmt_status($0, SQLITE_STMTSTATUS_REPREPARE, 0)) }
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
