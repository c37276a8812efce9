import Foundation
import LatchkeyCrypto

extension ServerConfiguration {
    /// Secrets at rest (`Setting.Group.secrets`).
    package struct SecretSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.secrets
        /// The key session signing keys are sealed under (AES-256-GCM); required unless
        /// `allowPlaintextSigningKeys`.
        package var keyEncryptionKey: KeyEncryptionKey?
        /// Earlier key-encryption keys: keys sealed under them are sealed again under the current
        /// one at start.
        package var previousKeyEncryptionKeys: [KeyEncryptionKey] = []
        /// Store session signing keys unencrypted when no key-encryption key is set. Off by
        /// default: anyone who can read the database could then forge a session for any user.
        package var allowPlaintextSigningKeys: Bool = false

        /// Refuses to store session signing keys unencrypted unless that was explicitly allowed;
        /// also checked by the `keys` commands, which need no Facebook settings.
        package func validate() throws {
            if keyEncryptionKey == nil, !allowPlaintextSigningKeys {
                throw ConfigurationError(
                    """
                    LATCHKEY_KEY_ENCRYPTION_KEY_FILE is required: session signing keys are encrypted at rest under it. \
                    Create one with `latchkey keys generate-kek --output FILE`, or set \
                    LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS=true to store them unencrypted (anyone who can read the \
                    database could then forge sessions)
                    """)
            }
        }
    }
}
