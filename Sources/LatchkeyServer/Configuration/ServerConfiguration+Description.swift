import Foundation

/// How a configuration prints: every way Swift turns a value into text (`description`,
/// `debugDescription`, `dump` and the default printing of anything holding one, such as the
/// service descriptions ServiceLifecycle logs at debug level) shows no secret. URLs keep their
/// user name but lose their password and secret-looking query values; apps and key-encryption
/// keys print their ids only.
extension ServerConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The settings that matter when reading a log, secrets redacted.
    package var description: String {
        "ServerConfiguration(" + redactedFields.map { "\($0.label): \($0.value)" }.joined(separator: ", ") + ")"
    }

    /// The same as `description`.
    package var debugDescription: String { description }

    /// The same fields as `description`, for `dump` and reflection.
    package var customMirror: Mirror {
        Mirror(self, children: redactedFields.map { (label: $0.label, value: $0.value as Any) }, displayStyle: .struct)
    }

    /// The fields shown, each already safe to print.
    private var redactedFields: [(label: String, value: String)] {
        let database = (try? DatabaseLocation(databaseURL))?.displayName ?? DatabaseLocation.redacted(databaseURL)
        return [
            ("host", host), ("port", "\(port)"), ("publicURL", publicURL.map(DatabaseLocation.redacted) ?? "nil"),
            ("database", database), ("facebookApps", "\(facebookApps)"),
            ("graphURL", DatabaseLocation.redacted(graphURL)), ("jwksURL", DatabaseLocation.redacted(jwksURL)),
            ("dialogURL", DatabaseLocation.redacted(dialogURL)), ("issuers", "\(issuers)"),
            ("oauthClients", "\(oauthClients.map(\.id))"),
            ("keyEncryptionKey", keyEncryptionKey.map(\.description) ?? "nil"),
            ("previousKeyEncryptionKeys", "\(previousKeyEncryptionKeys.map(\.description))"),
            ("allowPlaintextSigningKeys", "\(allowPlaintextSigningKeys)"),
            ("settingsFromFiles", "\(settingsFromFiles.sorted())"),
        ]
    }
}
