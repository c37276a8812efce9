import Crypto
import Foundation

#if !canImport(Security)
import _CryptoExtras
#endif

/// An RSA public key that checks RS256 signatures: Facebook's Limited Login keys.
///
/// On Apple platforms the check is Security's (`SecKey`), so an app using the SDK compiles no
/// BoringSSL; elsewhere it is swift-crypto's `_RSA` (BoringSSL). Both refuse the same keys here,
/// before either library sees them: a modulus under 2048 bits (swift-crypto's own floor) or over
/// 16384, or an empty exponent.
public struct RSAPublicKey: Sendable {
    /// The modulus, big-endian, without leading zero bytes.
    public let modulus: Data
    /// The public exponent, big-endian, without leading zero bytes.
    public let exponent: Data
    /// The modulus's length in bits; an RS256 signature is exactly this long.
    public let keySizeInBits: Int

    #if !canImport(Security)
    private let key: _RSA.Signing.PublicKey
    #endif

    /// The key with modulus `n` and exponent `e` (big-endian bytes, as a JWK's `n` and `e`);
    /// `nil` for a key either platform's library would refuse.
    public init?(n: Data, e: Data) {
        let modulus = Data(n.drop { $0 == 0 })
        let exponent = Data(e.drop { $0 == 0 })
        guard let first = modulus.first, !exponent.isEmpty, exponent.count <= 8 else { return nil }
        let bits = modulus.count * 8 - first.leadingZeroBitCount
        guard (2048...16384).contains(bits) else { return nil }
        self.modulus = modulus
        self.exponent = exponent
        self.keySizeInBits = bits
        #if !canImport(Security)
        guard let key = try? _RSA.Signing.PublicKey(n: modulus, e: exponent) else { return nil }
        self.key = key
        #endif
    }

    /// Whether `signature` is this key's RSASSA-PKCS1-v1_5 SHA-256 signature of `input`.
    func isValidRS256(_ signature: Data, for input: Data) -> Bool {
        #if canImport(Security)
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
