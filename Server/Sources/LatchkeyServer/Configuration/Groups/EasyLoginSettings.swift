import Foundation

extension ServerConfiguration {
    /// Easy Login, OAuth 2.0 with Facebook as the login page (`Setting.Group.easyLogin`).
    package struct EasyLoginSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.easyLogin
        /// Apps allowed to use Easy Login; none by default (the flow is off until one is registered).
        package var clients: [OAuthClient] = []
        /// How long a person may take on Facebook's dialog before the Easy Login request expires,
        /// seconds.
        package var requestLifetime: TimeInterval = 600
        /// Lifetime of Easy Login authorization codes, seconds (RFC 6749 §4.1.2: short; 10 minutes
        /// at most).
        package var authorizationCodeLifetime: TimeInterval = 60
        /// No longer used (`LATCHKEY_EASY_LOGIN_MAX_PENDING`, deprecated): it capped the Easy Login
        /// requests stored while people were on Facebook's dialog, a cap strangers could fill for
        /// everyone. Requests now travel sealed in Facebook's `state` and nothing is stored, so
        /// there is nothing to cap. Still read, so existing configurations start; a server given it
        /// logs `latchkey.settings.deprecated`.
        package var maximumPending: Int?

        /// The client with `id`, if registered.
        func client(_ id: String) -> OAuthClient? { clients.first { $0.id == id } }

        /// Refuses values that cannot work, naming the setting.
        func validate() throws {
            try ServerConfiguration.validateLifetime("LATCHKEY_EASY_LOGIN_TTL", requestLifetime)
            guard authorizationCodeLifetime > 0, authorizationCodeLifetime <= 600 else {
                throw ConfigurationError("LATCHKEY_AUTHORIZATION_CODE_TTL must be between 1 and 600 seconds")
            }
            for client in clients { try client.validate() }
            guard Set(clients.map(\.id)).count == clients.count else {
                throw ConfigurationError("LATCHKEY_OAUTH_CLIENTS names a client twice")
            }
        }
    }
}
