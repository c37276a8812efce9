import Foundation
import LatchkeyCrypto

extension ServerConfiguration {
    /// Verifying a sign-in: id tokens and nonces (`Setting.Group.signIn`).
    package struct SignInSettings: SettingsGroup {
        /// Listed under its own heading.
        package static let group = Setting.Group.signIn
        /// Largest accepted age of a Limited Login id token (`now - iat`), seconds. Facebook's
        /// SDKs use 600.
        package var idTokenMaxAge: TimeInterval = 600
        /// Tolerated clock difference with Facebook, seconds.
        package var clockSkew: TimeInterval = 60
        /// Accept id tokens without a nonce (not recommended: replay protection then rests on
        /// `jti` only).
        package var allowMissingNonce: Bool = false
        /// Require nonces issued by `POST /v1/auth/nonce`.
        package var requireServerNonce: Bool = false
        /// Lifetime of server-issued nonces, seconds.
        package var nonceLifetime: TimeInterval = 600
        /// How a Limited Login token's `nonce` claim must match the nonce sent
        /// (`LATCHKEY_LIMITED_LOGIN_NONCE`): `hashed` by default, so an intercepted id token alone
        /// signs nobody in; `raw` only with server nonces; `either` while apps move over.
        package var limitedLoginNonce: IDTokenPolicy.NonceMatching = .hashed

        /// Refuses values that cannot work, naming the setting.
        func validate() throws {
            try ServerConfiguration.validateLifetime("LATCHKEY_ID_TOKEN_MAX_AGE", idTokenMaxAge)
            try ServerConfiguration.validateLifetime("LATCHKEY_NONCE_TTL", nonceLifetime)
            guard clockSkew >= 0, clockSkew <= 600 else {
                throw ConfigurationError("LATCHKEY_CLOCK_SKEW must be between 0 and 600 seconds")
            }
            if limitedLoginNonce == .raw, !requireServerNonce {
                throw ConfigurationError(
                    "LATCHKEY_LIMITED_LOGIN_NONCE=raw needs LATCHKEY_REQUIRE_SERVER_NONCE=true: a raw nonce is the token's own "
                        + "claim, so whoever intercepts the token has it, unless the server issued it and spends it")
            }
        }
    }
}
