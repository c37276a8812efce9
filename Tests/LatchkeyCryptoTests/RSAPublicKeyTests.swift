import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import TestVectors
import Testing
import _CryptoExtras

/// `RSAPublicKey`: the keys it refuses (the same on every platform, before either library sees
/// them), and the PKCS #1 DER it hands Security's `SecKeyCreateWithData` on Apple platforms, read
/// back here by BoringSSL, an independent DER parser.
@Suite("RSA public keys")
struct RSAPublicKeyTests {
    static let jwk = Vectors.document["rsa"]?["jwk"] ?? .null
    static let n = Base64URL.decode(jwk["n"]?.stringValue ?? "") ?? Data()
    static let e = Base64URL.decode(jwk["e"]?.stringValue ?? "") ?? Data()

    @Test("the vector key: 2048 bits, its DER read back by BoringSSL to the same numbers")
    func der() throws {
        let key = try #require(RSAPublicKey(n: Self.n, e: Self.e))
        #expect(key.keySizeInBits == 2048)
        let parsed = try _RSA.Signing.PublicKey(derRepresentation: key.pkcs1DER)
        let primitives = try parsed.getKeyPrimitives()
        #expect(Data(primitives.modulus.drop { $0 == 0 }) == key.modulus)
        #expect(Data(primitives.publicExponent.drop { $0 == 0 }) == key.exponent)
        // The modulus's top bit is set, so its INTEGER carries a leading zero byte; the whole is one
        // SEQUENCE with a two-byte long-form length.
        #expect(key.pkcs1DER.prefix(4) == Data([0x30, 0x82, 0x01, 0x0A]))
    }

    @Test("leading zero bytes are not part of the number")
    func leadingZeros() throws {
        let padded = try #require(RSAPublicKey(n: Data([0, 0]) + Self.n, e: Data([0]) + Self.e))
        #expect(padded.modulus == Self.n.drop { $0 == 0 } && padded.keySizeInBits == 2048)
        #expect(padded.pkcs1DER == RSAPublicKey(n: Self.n, e: Self.e)?.pkcs1DER)
    }

    @Test(
        "refused: a modulus under 2048 bits or over 16384, an empty or oversized exponent",
        arguments: [
            (Data(repeating: 0xFF, count: 128), Data([1, 0, 1])),  // 1024 bits
            (Data([0x7F]) + Data(repeating: 0xFF, count: 255), Data([1, 0, 1])),  // 2047 bits
            (Data(repeating: 0xFF, count: 2049), Data([1, 0, 1])),  // 16392 bits
            (Data(repeating: 0xFF, count: 256), Data()),
            (Data(repeating: 0xFF, count: 256), Data([0, 0])),
            (Data(repeating: 0xFF, count: 256), Data(repeating: 1, count: 9)),
        ])
    func refused(n: Data, e: Data) {
        #expect(RSAPublicKey(n: n, e: e) == nil)
    }

    @Test("a signature one byte short or long is refused before the check")
    func signatureLength() throws {
        let key = try #require(RSAPublicKey(n: Self.n, e: Self.e))
        #expect(!RS256.isValid(Data(repeating: 1, count: 255), for: Data("x".utf8), key: key))
        #expect(!RS256.isValid(Data(repeating: 1, count: 257), for: Data("x".utf8), key: key))
    }
}
