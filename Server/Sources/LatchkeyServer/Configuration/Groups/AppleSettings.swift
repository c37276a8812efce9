import Crypto
import Foundation

extension ServerConfiguration {
    /// Sign in with Apple (`Setting.Group.apple`): off until `clientIDs` names the app.
    package struct AppleSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.apple
        /// The bundle ids and Services ids whose id tokens are accepted (`aud`); empty turns
        /// Sign in with Apple off. A token's code is exchanged, and its refresh token revoked,
        /// under the id it was issued to.
        package var clientIDs: [String] = []
        /// The 10-character Team ID (`iss` of the client secrets the server mints).
        package var teamID: String?
        /// The 10-character Key ID of the Sign in with Apple key (`kid` of the client secrets).
        package var keyID: String?
        /// The `.p8` key: it signs a short-lived client secret for each call to Apple.
        package var privateKey: ApplePrivateKey?
        /// Apple's base URL; the emulator's in development and tests.
        package var url: String = "https://appleid.apple.com"
        /// Upper bound on each call to Apple, seconds; beyond it the client gets 503 `apple_unavailable`.
        package var timeout: TimeInterval = 10
        /// Apple's fields (`given_name`, `family_name`, `email`, …) → user properties.
        package var fieldsMapping: [String: String] = [
            "given_name": "givenName", "family_name": "familyName", "email": "email",
        ]

        /// Whether the server asks Apple about its client secret soon after the start and every
        /// six hours (`AppleCredentialMonitor`). Not a setting: tests that count or fault Apple's
        /// calls turn it off and run the check themselves.
        package var checksCredentials = true

        /// Whether Sign in with Apple is served.
        package var isEnabled: Bool { !clientIDs.isEmpty }

        /// Apple's base URL without a trailing slash.
        var base: String { url.hasSuffix("/") ? String(url.dropLast()) : url }

        /// The issuers an Apple id token may carry: Apple's documented one, and the one Apple
        /// began to issue in 2025 without notice (supabase/auth#2050).
        static let issuers = ["https://appleid.apple.com", "https://account.apple.com"]

        /// The fields Apple's id token and the app's first authorization provide.
        static let fields: Set<String> = [
            "sub", "email", "email_verified", "is_private_email", "given_name", "family_name", "name",
            "real_user_status",
        ]

        /// Refuses values that cannot work, naming the setting.
        func validate(_ shown: (String, String) -> String) throws {
            try ServerConfiguration.validateHTTPURL("LATCHKEY_APPLE_URL", url, shown)
            // Client secrets and refresh tokens travel to this URL, and its keys are trusted: plain
            // http only to this machine (the emulator).
            if let parsed = URL(string: url), parsed.scheme == "http",
                !["127.0.0.1", "localhost", "::1", "[::1]"].contains(parsed.host ?? "")
            {
                throw ConfigurationError("LATCHKEY_APPLE_URL must be https (plain http only to 127.0.0.1 or localhost)")
            }
            guard timeout > 0, timeout <= 120 else {
                throw ConfigurationError("LATCHKEY_APPLE_TIMEOUT must be between 0 and 120 seconds")
            }
            for (field, property) in fieldsMapping {
                guard Self.fields.contains(field) else {
                    throw ConfigurationError(
                        "LATCHKEY_APPLE_FIELDS_MAPPING: '\(field)' is not an Apple field; use one of \(Self.fields.sorted().joined(separator: ", "))"
                    )
                }
                try FieldMapping.validateProperty(property, setting: "LATCHKEY_APPLE_FIELDS_MAPPING")
            }
            guard isEnabled else { return }
            for id in clientIDs where id.utf8.count > 255 || id.contains(where: \.isWhitespace) {
                throw ConfigurationError("LATCHKEY_APPLE_CLIENT_IDS entries must be bundle ids or Services ids")
            }
            for (name, value) in [("LATCHKEY_APPLE_TEAM_ID", teamID), ("LATCHKEY_APPLE_KEY_ID", keyID)] {
                guard let value else {
                    throw ConfigurationError("\(name) is required when LATCHKEY_APPLE_CLIENT_IDS is set")
                }
                guard Self.isAppleIdentifier(value) else {
                    throw ConfigurationError(
                        "\(name) must be the 10 letters and digits Apple's developer site shows, not \(shown(name, value))"
                    )
                }
            }
            guard privateKey != nil else {
                throw ConfigurationError(
                    "LATCHKEY_APPLE_PRIVATE_KEY_FILE is required when LATCHKEY_APPLE_CLIENT_IDS is set: the .p8 key of the Sign in with Apple key named by LATCHKEY_APPLE_KEY_ID"
                )
            }
        }

        /// Apple's Team and Key IDs: ten upper-case letters and digits.
        static func isAppleIdentifier(_ value: String) -> Bool {
            value.utf8.count == 10
                && value.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
        }
    }

    /// The Sign in with Apple private key (P-256), never printed.
    package struct ApplePrivateKey: Sendable, CustomStringConvertible, CustomReflectable {
        /// The key.
        let key: P256.Signing.PrivateKey

        /// Reads Apple's `.p8` (PKCS #8 PEM), or a SEC1 PEM, of a P-256 key.
        /// - Parameter setting: the name to put in the error (the key itself is never echoed).
        /// - Throws: `ConfigurationError` when the text is not a P-256 private key.
        package init(pem: String, setting: String) throws {
            do {
                key = try P256.Signing.PrivateKey(pemRepresentation: pem)
            } catch {
                throw ConfigurationError(
                    "\(setting) must hold the .p8 file Apple's developer site gave for the key (a P-256 private key in PEM)"
                )
            }
        }

        /// The public half, which Apple (or the emulator) checks client secrets with.
        package var publicKey: P256.Signing.PublicKey { key.publicKey }

        /// Wraps a key (tests, `serve --dev`).
        package init(_ key: P256.Signing.PrivateKey) { self.key = key }

        /// Never the key.
        package var description: String { "ApplePrivateKey(<redacted>)" }
        /// Never the key.
        package var customMirror: Mirror { Mirror(self, children: ["key": "<redacted>"]) }
    }
}
