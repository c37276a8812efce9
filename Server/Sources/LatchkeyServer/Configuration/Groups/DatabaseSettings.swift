import Foundation

extension ServerConfiguration {
    /// Where data is stored (`Setting.Group.database`).
    package struct DatabaseSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.database
        /// `sqlite:PATH`, a file path, `file:PATH`, or `postgres://user:password@host:port/db?sslmode=…`.
        package var url: String = "latchkey.sqlite"
        /// PostgreSQL: the most connections one server holds (`LATCHKEY_DATABASE_POOL_SIZE`).
        /// Every server of a deployment holds up to this many, so their sum must stay under the
        /// database's `max_connections`.
        package var poolSize: Int = 10
        /// PostgreSQL: seconds a store operation may wait for a connection and its answer before
        /// the request gets 503 `database_unavailable` (`LATCHKEY_DATABASE_TIMEOUT`).
        package var timeout: TimeInterval = 5

        /// Refuses values that cannot work, naming the setting.
        func validate() throws {
            _ = try DatabaseLocation(url)
            guard (1...1000).contains(poolSize) else {
                throw ConfigurationError("LATCHKEY_DATABASE_POOL_SIZE must be between 1 and 1000")
            }
            guard timeout >= 0.1, timeout <= 300 else {
                throw ConfigurationError("LATCHKEY_DATABASE_TIMEOUT must be between 0.1 and 300 seconds")
            }
        }
    }
}
