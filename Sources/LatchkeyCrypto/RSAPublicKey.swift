import Crypto
import Foundation

#if !canImport(Darwin)
import _CryptoExtras
#endif

/// An RSA public key that checks RS256 signatures: Facebook's Limited Login keys.
///
/// On Apple platforms the check is Security's (`SecKey`), so an app using the SDK links no
/// BoringSSL; elsewhere it is swift-crypto's `_RSA` (BoringSSL). So that both accept the same
/// keys, the key is checked here first against the rules of the stricter of the two: a modulus
/// of 2048 to 8192 bits (swift-crypto's floor, BoringSSL's and Security's ceiling), odd, and an odd
/// public exponent from 3 to 2³³ − 1 (BoringSSL's range). Then the platform's library must accept
/// it too. A JWKS entry either refuses is skipped as unusable on every platform alike.
public struct RSAPublicKey: Sendable {
    /// The modulus, big-endian, without leading zero bytes.
    public let modulus: Data
    /// The public exponent, big-endian, without leading zero bytes.
    public let exponent: Data
    /// The modulus's length in bits.
    public let keySizeInBits: Int

    #if !canImport(Darwin)
    private let key: _RSA.Signing.PublicKey
    #endif

    /// The key with modulus `n` and exponent `e` (big-endian bytes, as a JWK's `n` and `e`);
    /// `nil` for a key outside the rules above or refused by the platform's library.
    public init?(n: Data, e: Data) {
        let modulus = Data(n.drop { $0 == 0 })
        let exponent = Data(e.drop { $0 == 0 })
        guard let first = modulus.first, let last = modulus.last, last & 1 == 1 else { return nil }
        let bits = modulus.count * 8 - first.leadingZeroBitCount
        guard (2048...8192).contains(bits), exponent.count <= 5 else { return nil }
        let e = exponent.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard e >= 3, e < 1 << 33, e & 1 == 1 else { return nil }
        self.modulus = modulus
        self.exponent = exponent
        self.keySizeInBits = bits
        #if canImport(Darwin)
        guard SecurityRS256.accepts(publicKey: pkcs1DER) else { return nil }
        #else
        guard let key = try? _RSA.Signing.PublicKey(n: modulus, e: exponent) else { return nil }
        self.key = key
        #endif
    }

    /// How long an RS256 signature by this key is, in bytes: the modulus's length.
    public var signatureLength: Int { (keySizeInBits + 7) / 8 }

    /// Whether `signature` is this key's RSASSA-PKCS1-v1_5 SHA-256 signature of `input`.
    func isValidRS256(_ signature: Data, for input: Data) -> Bool {
        #if canImport(Darwin)
        SecurityRS256.isValid(signature, for: input, publicKey: pkcs1DER)
        #else
        key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: input),
            padding: .insecurePKCS1v1_5)
        #endif
    }

    /// The key as PKCS #1 `RSAPublicKey` DER (RFC 8017 §A.1.1: a SEQUENCE of the modulus and the
    /// exponent as INTEGERs), the form `SecKeyCreateWithData` takes for an RSA public key.
    public var pkcs1DER: Data {
        DER.sequence(DER.unsignedInteger(modulus) + DER.unsignedInteger(exponent))
    }
}

/// The few DER encodings `RSAPublicKey.pkcs1DER` needs (X.690 §8.1, §8.3, §8.9).
enum DER {
    /// A non-negative INTEGER from big-endian bytes: a leading zero byte keeps a set top bit
    /// from reading as a sign.
    static func unsignedInteger(_ bytes: Data) -> Data {
        let trimmed = Data(bytes.drop { $0 == 0 })
        let content = trimmed.isEmpty || trimmed[trimmed.startIndex] & 0x80 != 0 ? Data([0]) + trimmed : trimmed
        return Data([0x02]) + length(content.count) + content
    }

    /// A SEQUENCE of already encoded elements.
    static func sequence(_ content: Data) -> Data {
        Data([0x30]) + length(content.count) + content
    }

    /// A definite length: short form below 128, else the long form's byte count and bytes.
    static func length(_ count: Int) -> Data {
        guard count >= 0x80 else { return Data([UInt8(count)]) }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return Data([0x80 | UInt8(bytes.count)] + bytes)
    }
}
