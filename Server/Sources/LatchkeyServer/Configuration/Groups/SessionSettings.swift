import Foundation

extension ServerConfiguration {
    /// Sessions, their tokens and their signing keys (`Setting.Group.sessions`).
    package struct SessionSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.sessions
        /// Lifetime of access tokens, seconds.
        package var accessTokenLifetime: TimeInterval = 900
        /// Lifetime of refresh tokens (renewed by each rotation), seconds.
        package var refreshTokenLifetime: TimeInterval = 30 * 86_400
        /// Seconds after a refresh during which the same refresh token, presented again after its
        /// successor was used (a concurrent refresh won), is refused without revoking the session
        /// (`LATCHKEY_REFRESH_RETRY_WINDOW`). While the successor is unused the token gets it
        /// again at any time (the app lost or failed to save the answer); 0 turns both off.
        package var refreshRetryWindow: TimeInterval = 10
        /// Seconds between two reads of the session signing keys (`SessionKeyRefresher`,
        /// `LATCHKEY_KEY_REFRESH_INTERVAL`): how soon a key added by `latchkey keys rotate` is
        /// published by every running server.
        package var keyRefreshInterval: TimeInterval = 60
        /// Seconds a new session signing key is only published before it signs
        /// (`LATCHKEY_KEY_ACTIVATION_DELAY`): long enough for every server to read it (at least two
        /// refresh intervals) and for app backends caching the JWKS (`max-age=300`) to fetch it.
        package var keyActivationDelay: TimeInterval = 600

        /// Refuses values that cannot work, naming the setting.
        func validate() throws {
            try ServerConfiguration.validateLifetime("LATCHKEY_ACCESS_TOKEN_TTL", accessTokenLifetime)
            try ServerConfiguration.validateLifetime("LATCHKEY_REFRESH_TOKEN_TTL", refreshTokenLifetime)
            guard refreshRetryWindow >= 0, refreshRetryWindow <= 300 else {
                throw ConfigurationError("LATCHKEY_REFRESH_RETRY_WINDOW must be between 0 and 300 seconds")
            }
            guard keyRefreshInterval >= 0.1, keyRefreshInterval <= 3600 else {
                throw ConfigurationError("LATCHKEY_KEY_REFRESH_INTERVAL must be between 0.1 and 3600 seconds")
            }
            // Two intervals: a server whose one refresh failed has still read the key before it signs.
            guard keyActivationDelay >= 2 * keyRefreshInterval, keyActivationDelay <= 30 * 86_400 else {
                throw ConfigurationError(
                    "LATCHKEY_KEY_ACTIVATION_DELAY must be at least twice LATCHKEY_KEY_REFRESH_INTERVAL (and at most 30 days)"
                )
            }
        }
    }
}
