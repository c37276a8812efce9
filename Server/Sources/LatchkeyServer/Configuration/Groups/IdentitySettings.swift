import Foundation

extension ServerConfiguration {
    /// Guests, linking identities, merging and deleting accounts (`Setting.Group.identities`).
    package struct IdentitySettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.identities
        /// `POST /v1/auth/anonymous` creates guests (`LATCHKEY_ANONYMOUS_USERS`); off by default, so
        /// a deployment never makes accounts that have no sign-in method without asking for them.
        package var anonymousUsers = false
        /// Seconds a guest may go unused before the maintenance service deletes it.
        package var anonymousUserLifetime: TimeInterval = 30 * 86_400
        /// Seconds a link ticket stays valid.
        package var linkTicketLifetime: TimeInterval = 600
        /// Seconds after a session's sign-in during which it may delete its account.
        package var reauthenticationWindow: TimeInterval = 600

        /// Refuses values that cannot work, naming the setting.
        func validate() throws {
            try ServerConfiguration.validateLifetime("LATCHKEY_ANONYMOUS_USER_TTL", anonymousUserLifetime)
            try ServerConfiguration.validateLifetime("LATCHKEY_LINK_TICKET_TTL", linkTicketLifetime)
            try ServerConfiguration.validateLifetime("LATCHKEY_REAUTHENTICATION_WINDOW", reauthenticationWindow)
        }
    }
}
