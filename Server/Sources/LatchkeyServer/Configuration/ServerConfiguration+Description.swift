import Foundation

/// A value that prints without its secrets in every way Swift turns a value into text
/// (`description`, `debugDescription`, `dump`, and the default printing of anything holding one,
/// such as the service descriptions ServiceLifecycle logs at debug level).
package protocol RedactedDescription: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The fields shown, each already safe to print.
    var redactedFields: [(label: String, value: String)] { get }
}

extension RedactedDescription {
    /// The fields, secrets redacted.
    package var description: String {
        "\(Self.self)(" + redactedFields.map { "\($0.label): \($0.value)" }.joined(separator: ", ") + ")"
    }

    /// The same as `description`.
    package var debugDescription: String { description }

    /// The same fields as `description`, for `dump` and reflection.
    package var customMirror: Mirror {
        Mirror(self, children: redactedFields.map { (label: $0.label, value: $0.value as Any) }, displayStyle: .struct)
    }
}

/// How a configuration prints: URLs keep their user name but lose their password and
/// secret-looking query values; apps and key-encryption keys print their ids only.
extension ServerConfiguration: RedactedDescription {
    package var redactedFields: [(label: String, value: String)] {
        http.redactedFields + database.redactedFields + facebook.redactedFields
            + [("oauthClients", "\(easyLogin.clients.map(\.id))")] + secrets.redactedFields
            + [("settingsFromFiles", "\(settingsFromFiles.sorted())")]
    }
}

extension ServerConfiguration.HTTPSettings: RedactedDescription {
    package var redactedFields: [(label: String, value: String)] {
        [("host", host), ("port", "\(port)"), ("publicURL", publicURL.map(DatabaseLocation.redacted) ?? "nil")]
    }
}

extension ServerConfiguration.DatabaseSettings: RedactedDescription {
    package var redactedFields: [(label: String, value: String)] {
        [("database", (try? DatabaseLocation(url))?.displayName ?? DatabaseLocation.redacted(url))]
    }
}

extension ServerConfiguration.FacebookSettings: RedactedDescription {
    package var redactedFields: [(label: String, value: String)] {
        [
            ("facebookApps", "\(apps)"), ("graphURL", DatabaseLocation.redacted(graphURL)),
            ("jwksURL", DatabaseLocation.redacted(jwksURL)), ("dialogURL", DatabaseLocation.redacted(dialogURL)),
            ("issuers", "\(issuers)"),
        ]
    }
}

extension ServerConfiguration.SecretSettings: RedactedDescription {
    package var redactedFields: [(label: String, value: String)] {
        [
            ("keyEncryptionKey", keyEncryptionKey.map(\.description) ?? "nil"),
            ("previousKeyEncryptionKeys", "\(previousKeyEncryptionKeys.map(\.description))"),
            ("allowPlaintextSigningKeys", "\(allowPlaintextSigningKeys)"),
        ]
    }
}
