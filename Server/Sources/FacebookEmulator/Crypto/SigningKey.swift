import Crypto
import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import SwiftASN1
import X509
import _CryptoExtras

/// One of the emulator's RSA keys for Limited Login id tokens, with every public form Facebook publishes.
///
/// Facebook serves the same key as a JWK (`/.well-known/oauth/openid/jwks/`), as an X.509 PEM
/// certificate for the iOS SDK (`…/certs/`) and as an SPKI PEM for the Android SDK (`…/keys/`); the
/// forms are computed once here so that every request just reads them.
public struct SigningKey: Sendable {
    /// The key id: 40 hex characters, as Facebook's are.
    public let kid: String
    let privateKey: _RSA.Signing.PrivateKey
    /// The public key as a JWK (`kty`, `alg`, `use`, `kid`, `n`, `e`).
    public let jwk: JSONValue
    /// A self-signed X.509 certificate in PEM, the iOS SDK's format.
    public let certificatePEM: String
    /// The SubjectPublicKeyInfo in PEM, the Android SDK's format.
    public let publicKeyPEM: String

    /// Generates a fresh 2048-bit key.
    /// - Parameter now: the start of the certificate's validity.
    public static func generate(now: Date) throws -> SigningKey {
        try SigningKey(privateKey: _RSA.Signing.PrivateKey(keySize: .bits2048), now: now)
    }

    /// Wraps an existing key, e.g. one from a seed file so that tokens stay verifiable across restarts.
    /// - Parameters:
    ///   - pem: a PKCS#1 or PKCS#8 RSA private key of at least 2048 bits.
    ///   - now: the start of the certificate's validity.
    public init(pem: String, now: Date) throws {
        try self.init(privateKey: _RSA.Signing.PrivateKey(pemRepresentation: pem), now: now)
    }

    /// Generates a fresh 2048-bit key for Apple's side (`/auth/keys`), with a kid shaped like
    /// Apple's: a few letters and digits (`W6WcOKB`), not Facebook's 40 hex characters.
    static func generateApple(now: Date) throws -> SigningKey {
        try SigningKey(
            privateKey: _RSA.Signing.PrivateKey(keySize: .bits2048), now: now, kid: RandomToken.alphanumeric(7))
    }

    /// - Parameter kid: the key id; `nil` derives Facebook's from the public key.
    init(privateKey: _RSA.Signing.PrivateKey, now: Date, kid: String? = nil) throws {
        self.privateKey = privateKey
        let publicKey = privateKey.publicKey
        let digest = SHA256.hash(data: publicKey.derRepresentation)
        self.kid = kid ?? Hex.encode(digest.prefix(20))
        self.jwk = try Self.publicJWK(of: publicKey, kid: self.kid)
        self.publicKeyPEM = publicKey.pemRepresentation
        let name = try DistinguishedName {
            CommonName("facebook-emulator.local")
            OrganizationName("Latchkey Facebook Emulator")
        }
        let certificatePrivateKey = Certificate.PrivateKey(privateKey)
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: certificatePrivateKey.publicKey,
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(3 * 365 * 86_400),
            issuer: name,
            subject: name,
            signatureAlgorithm: .sha256WithRSAEncryption,
            extensions: Certificate.Extensions {},
            issuerPrivateKey: certificatePrivateKey
        )
        self.certificatePEM = try certificate.serializeAsPEM().pemString
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256 over `message`: the `RS256` of JWS that `LatchkeyCrypto.RS256`
    /// verifies.
    func signRS256(_ message: some DataProtocol) throws -> Data {
        try privateKey.signature(for: SHA256.hash(data: Data(message)), padding: .insecurePKCS1v1_5).rawRepresentation
    }

    /// The public JWK of `key` as Facebook publishes one (`kid`, `kty`, `alg`, `use`, `n`, `e`),
    /// which `RSAJWK.signingKeys` reads.
    static func publicJWK(of key: _RSA.Signing.PublicKey, kid: String) throws -> JSONValue {
        let primitives = try key.getKeyPrimitives()
        return [
            "kid": .string(kid), "kty": "RSA", "alg": "RS256", "use": "sig",
            "n": .string(Base64URL.encode(primitives.modulus)),
            "e": .string(Base64URL.encode(primitives.publicExponent)),
        ]
    }
}
