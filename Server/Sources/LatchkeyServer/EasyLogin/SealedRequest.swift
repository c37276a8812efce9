import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyShared

/// The `state` Latchkey sends to Facebook's dialog: the app's whole request, sealed, so that
/// nothing is stored until the person comes back and no stranger can fill anything shared.
///
/// `base64url(version ‖ key id ‖ AES-256-GCM nonce ‖ ciphertext ‖ tag)`, the version and key id
/// authenticated as associated data. Sealed, not only signed: the URL goes through Facebook, the
/// browser's history and proxies' logs, and must not show the app's redirect URI, its state or our
/// PKCE verifier towards Facebook. The key comes from the session signing key (`requestKey`),
/// which every node holds, so any node opens what another sealed.
enum SealedRequest {
    /// The format's version, the first byte: a later format can be told apart, and refused here.
    static let version: UInt8 = 1

    /// The longest `state` accepted back from Facebook, characters: above any request `authorize`
    /// seals (its fields are bounded there), far below what a URL carries.
    static let maximumLength = 8192

    /// Seals `request` under `key` (`Sealing`, with the key's `requestKey`).
    /// - Throws: only if AES-GCM itself fails.
    static func seal(_ request: AuthorizationRequest, key: SessionSigningKey) throws -> String {
        try Sealing.seal(request.encoded, kind: version, key: key, using: \.requestKey)
    }

    /// What a sealed state holds, once opened.
    struct Opened: Sendable {
        /// The request.
        let request: AuthorizationRequest
        /// What records the state's single use (`Sealing.open`).
        let useKey: String
    }

    /// Opens `state` with the ring's keys; `nil` when it is not a state this deployment sealed,
    /// or it was altered.
    static func open(_ state: String, keys: [Data: SessionSigningKey]) -> Opened? {
        guard
            let opened = Sealing.open(
                state, kind: version, maximumLength: maximumLength, keys: keys, using: \.requestKey),
            let request = AuthorizationRequest(encoded: opened.plain)
        else { return nil }
        return Opened(request: request, useKey: opened.useKey)
    }
}
