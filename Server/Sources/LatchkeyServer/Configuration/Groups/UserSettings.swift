import Foundation

extension ServerConfiguration {
    /// The user properties a sign-in maps and apps may write (`Setting.Group.users`).
    package struct UserSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.users
        /// Facebook field → property, applied when a request has no mapping.
        package var defaultFieldsMapping: [String: String] = [
            "name": "name", "first_name": "firstName", "last_name": "lastName", "email": "email", "picture": "picture",
        ]
        /// Properties a client may target through `fieldsMapping`; `nil` allows any valid name. By
        /// default only the default mapping's properties, so a client cannot write onto properties
        /// the app or an admin owns.
        package var clientMappableProperties: Set<String>? = ["name", "firstName", "lastName", "email", "picture"]
        /// Properties a signed-in user may change with `PATCH /v1/users/me`.
        package var writableProperties: Set<String> = []
        /// Refresh mapped properties on every login, not only the first.
        package var refreshPropertiesOnLogin: Bool = true

        /// Refuses values that cannot work, naming the setting.
        func validate() throws {
            for (field, property) in defaultFieldsMapping {
                try FieldMapping.validate(field: field, property: property)
            }
        }
    }
}
