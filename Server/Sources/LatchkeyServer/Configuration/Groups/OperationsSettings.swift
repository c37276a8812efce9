import Foundation

extension ServerConfiguration {
    /// What operators see and reach: the admin API's listener, the log's format, the access log
    /// (`Setting.Group.operations`).
    package struct OperationsSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.operations
        /// Where the admin API and `/metrics` are served apart from the public listener
        /// (`LATCHKEY_ADMIN_LISTEN`, `HOST:PORT`); `nil` serves them on the public listener.
        package var adminListen: String?
        /// How log lines are written (`LATCHKEY_LOG_FORMAT`).
        package var logFormat = LogFormat.text
        /// Whether each request is logged (`LATCHKEY_ACCESS_LOG`).
        package var accessLog = false

        /// How log lines are written.
        package enum LogFormat: String, Sendable, CaseIterable {
            /// swift-log's text lines, for people.
            case text
            /// One JSON object per line, for log collectors (`JSONLogHandler`).
            case json
        }

        /// `adminListen` read as a host and a port (an IPv6 host in brackets); `nil` when unset
        /// or malformed (`validate` refuses the latter).
        package var adminAddress: (host: String, port: Int)? {
            guard let adminListen, let colon = adminListen.lastIndex(of: ":"),
                let port = Int(adminListen[adminListen.index(after: colon)...]), (0...65_535).contains(port)
            else { return nil }
            var host = String(adminListen[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty, !host.contains(where: { $0 == "[" || $0 == "]" || $0 == "/" || $0 == " " }) else {
                return nil
            }
            return (host, port)
        }

        /// Refuses values that cannot work, naming the setting.
        func validate() throws {
            if adminListen != nil, adminAddress == nil {
                throw ConfigurationError(
                    "LATCHKEY_ADMIN_LISTEN must be HOST:PORT, such as 127.0.0.1:9090 or [::1]:9090")
            }
        }
    }
}
