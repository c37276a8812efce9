import Foundation

extension ServerConfiguration {
    /// A second factor: TOTP authenticators, recovery codes and challenges (`Setting.Group.secondFactor`).
    package struct SecondFactorSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.secondFactor
        /// What authenticator apps show beside the account (`LATCHKEY_TOTP_ISSUER`).
        package var totpIssuer = "Latchkey"
        /// Steps of 30 s a code may be off either way (`LATCHKEY_TOTP_SKEW_STEPS`).
        package var skewSteps = 1
        /// Wrong codes per challenge, and in a row per user before their attempts wait
        /// (`LATCHKEY_TOTP_MAX_ATTEMPTS`).
        package var maximumAttempts = 5
        /// Seconds a challenge stays usable (`LATCHKEY_MFA_CHALLENGE_TTL`).
        package var challengeLifetime: TimeInterval = 300

        /// Refuses values that cannot work, naming the setting.
        func validate() throws {
            let issuer = totpIssuer.trimmingCharacters(in: .whitespaces)
            // A colon would split the URI's label (issuer:account) in two.
            guard !issuer.isEmpty, issuer.count <= 64, !issuer.contains(":"),
                issuer.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
            else {
                throw ConfigurationError(
                    "LATCHKEY_TOTP_ISSUER must be 1 to 64 printable characters without a colon")
            }
            // Each step either way widens what a guess can hit: 2 (five codes) is already generous.
            guard (0...2).contains(skewSteps) else {
                throw ConfigurationError("LATCHKEY_TOTP_SKEW_STEPS must be 0, 1 or 2")
            }
            guard (1...20).contains(maximumAttempts) else {
                throw ConfigurationError("LATCHKEY_TOTP_MAX_ATTEMPTS must be between 1 and 20")
            }
            try ServerConfiguration.validateLifetime("LATCHKEY_MFA_CHALLENGE_TTL", challengeLifetime)
            guard challengeLifetime <= 3600 else {
                throw ConfigurationError("LATCHKEY_MFA_CHALLENGE_TTL must be at most 3600 seconds")
            }
        }
    }
}
