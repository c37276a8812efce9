import Foundation

extension ServerConfiguration {
    /// Background work (`Setting.Group.maintenance`).
    package struct MaintenanceSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.maintenance
        /// How long audit events are kept, seconds; older ones are deleted (`PruningService`). 90 days.
        package var auditRetention: TimeInterval = 180 * 86_400
        /// Time between two prunes of expired records, seconds (`PruningService`). Five minutes.
        package var pruneInterval: TimeInterval = 300
        /// Time between two looks for due background jobs, seconds (`JobService`): how soon an
        /// account deletion's revocation at Facebook starts.
        package var jobInterval: TimeInterval = 10

        /// Refuses values that cannot work, naming the setting.
        func validate() throws {
            // Up to a century: a retention far past any record's age behaves as "keep everything".
            guard auditRetention > 0, auditRetention <= 100 * 365 * 86_400 else {
                throw ConfigurationError("LATCHKEY_AUDIT_RETENTION must be a positive number of seconds")
            }
            guard pruneInterval >= 1, pruneInterval <= 86_400 else {
                throw ConfigurationError("LATCHKEY_PRUNE_INTERVAL must be between 1 and 86400 seconds")
            }
            guard jobInterval >= 0.1, jobInterval <= 3600 else {
                throw ConfigurationError("LATCHKEY_JOB_INTERVAL must be between 0.1 and 3600 seconds")
            }
        }
    }
}
