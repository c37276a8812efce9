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

    /// Seals `request` under `key`.
    /// - Throws: only if AES-GCM itself fails.
    static func seal(_ request: AuthorizationRequest, key: SessionSigningKey) throws -> String {
        let header = Data([version]) + key.requestKeyID
        let box = try AES.GCM.seal(request.encoded, using: key.requestKey, authenticating: header)
        guard let combined = box.combined else { throw SealedRequestError.sealingFailed }
        return Base64URL.encode(header + combined)
    }

    /// What a sealed state holds, once opened.
    struct Opened: Sendable {
        /// The request.
        let request: AuthorizationRequest
        /// SHA-256 of the sealed bytes: what records the state's single use. The bytes, not the
        /// text, so a state spelled another way (base64url's spare bits, padding) is the same use.
        let useKey: String
    }

    /// Opens `state` with the ring's keys; `nil` when it is not a state this deployment sealed,
    /// or it was altered.
    static func open(_ state: String, keys: [Data: SessionSigningKey]) -> Opened? {
        guard state.utf8.count <= maximumLength, let bytes = Base64URL.decode(state),
            bytes.count > 1 + 8 + 12 + 16, bytes.first == version,
            let key = keys[Data(bytes.dropFirst().prefix(8))]
        else { return nil }
        let header = Data(bytes.prefix(9))
        guard let box = try? AES.GCM.SealedBox(combined: Data(bytes.dropFirst(9))),
            let plain = try? AES.GCM.open(box, using: key.requestKey, authenticating: header),
            let request = AuthorizationRequest(encoded: plain)
        else { return nil }
        return Opened(request: request, useKey: Base64URL.encode(Data(SHA256.hash(data: bytes))))
    }
}

/// A sealing failure: AES-GCM gave no combined form (it always does with its own 12-byte nonce).
enum SealedRequestError: Error {
    case sealingFailed
}
