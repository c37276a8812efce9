import Crypto
import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import NIOCore

/// One ES256 key that signs Latchkey access tokens, with its public JWK computed once.
package struct SessionSigningKey: Sendable {
    /// Key id: base64url SHA-256 thumbprint prefix of the public key, stable for the key's life.
    package let kid: String
    /// When the key was created.
    package let createdAt: Date
    /// When a newer key replaced it for signing; it keeps verifying until its last tokens expire.
    package let retiredAt: Date?
    let privateKey: P256.Signing.PrivateKey
    /// The public key as a JWK.
    package let jwk: JSONValue
    /// Derives refresh tokens' successors (`refreshSuccessor(of:)`): HKDF of the private scalar,
    /// bound to that purpose, so it is as secret and as shared between servers as the key itself
    /// and says nothing about it.
    let successorKey: SymmetricKey
    /// Seals Easy Login requests into the `state` sent to Facebook (`SealedRequest`): AES-256-GCM,
    /// HKDF of the private scalar bound to that purpose, so every server holding the key ring can
    /// open a request another one sealed, with no key of its own to configure.
    let requestKey: SymmetricKey
    /// Seals link tickets and Easy Login link requests (`SealedToken`): derived like `requestKey`
    /// but for its own purpose, so a sealed Easy Login state never opens as a ticket.
    let ticketKey: SymmetricKey
    /// Names `requestKey` (and `ticketKey`) in a sealed value: the first 8 bytes of the kid's thumbprint, enough to
    /// tell apart the few keys of a ring, short enough for a URL.
    let requestKeyID: Data

    /// Wraps a stored key.
    /// - Parameter rawPrivateKey: the 32-byte P-256 scalar, as stored.
    package init(rawPrivateKey: Data, createdAt: Date, retiredAt: Date?) throws {
        try self.init(
            privateKey: P256.Signing.PrivateKey(rawRepresentation: rawPrivateKey), createdAt: createdAt,
            retiredAt: retiredAt)
    }

    init(privateKey: P256.Signing.PrivateKey, createdAt: Date, retiredAt: Date?) {
        self.privateKey = privateKey
        self.createdAt = createdAt
        self.retiredAt = retiredAt
        let point = privateKey.publicKey.x963Representation  // 0x04 || X || Y
        let x = point.dropFirst().prefix(32)
        let y = point.dropFirst(33)
        let thumbprintInput = #"{"crv":"P-256","kty":"EC","x":"\#(Base64URL.encode(x))","y":"\#(Base64URL.encode(y))"}"#
        let thumbprint = Data(SHA256.hash(data: Data(thumbprintInput.utf8)))
        self.kid = Base64URL.encode(thumbprint.prefix(16))
        self.jwk = [
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": .string(kid),
            "x": .string(Base64URL.encode(x)), "y": .string(Base64URL.encode(y)),
        ]
        self.successorKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: privateKey.rawRepresentation),
            info: Data("latchkey refresh-token successor v1".utf8), outputByteCount: 32)
        self.requestKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: privateKey.rawRepresentation),
            info: Data("latchkey easy-login request v1".utf8), outputByteCount: 32)
        self.ticketKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: privateKey.rawRepresentation),
            info: Data("latchkey link ticket v1".utf8), outputByteCount: 32)
        self.requestKeyID = Data(thumbprint.prefix(8))
    }

    /// The refresh token that replaces `token` when this key signs: HMAC-SHA256 of it under
    /// `successorKey`, 256 bits like a random one. The same on every server, so an app retrying a
    /// refresh whose answer it lost gets the same token again; unpredictable without the key, so
    /// a copy of a spent token (a log, a backup) never names the token that replaced it.
    func refreshSuccessor(of token: String) -> String {
        Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data(token.utf8), using: successorKey)))
    }

    /// A new random key.
    package static func generate(now: Date) -> SessionSigningKey {
        SessionSigningKey(privateKey: P256.Signing.PrivateKey(), createdAt: now, retiredAt: nil)
    }

    /// The raw private scalar, for storage.
    package var rawPrivateKey: Data { privateKey.rawRepresentation }

    /// ES256 signature (raw `r || s`, RFC 7518 §3.4) in its low-S form (`LatchkeyCrypto.ES256`).
    func sign(_ input: Data) throws -> Data { try ES256.sign(input, key: privateKey) }

    /// Checks an ES256 signature; a high-S one is refused, so each token has exactly one encoding.
    func verify(_ signature: Data, for input: Data) -> Bool {
        ES256.isValid(signature, for: input, key: privateKey.publicKey)
    }
}
