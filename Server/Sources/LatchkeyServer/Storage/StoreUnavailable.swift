/// The database did not answer: unreachable, refusing connections, or slower than the configured
/// timeout. Requests meeting it get 503 `unavailable` with `Retry-After`, never a 500, since
/// nothing is wrong with the request and retrying later succeeds once the database is back.
package struct StoreUnavailable: Error, Sendable, CustomStringConvertible {
    /// What happened, for the log; never a password or a query's values.
    package let reason: String

    /// Creates the error.
    package init(_ reason: String) { self.reason = reason }

    /// The reason.
    package var description: String { "database unavailable: \(reason)" }
}
