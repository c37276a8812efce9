import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared
import TestVectors
import Testing
import _CryptoExtras

/// `RSAPublicKey`: the keys it refuses by its own rules, before the platform's library sees them
/// (run here on Linux, where BoringSSL checks after; on Apple platforms the same rules run before
/// Security's), and the PKCS #1 DER it hands Security's `SecKeyCreateWithData` there, read back
/// here by BoringSSL, an independent DER parser.
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
        "refused: a modulus outside 2048…8192 bits or even; an exponent even, under 3 or from 2³³",
        arguments: [
            (Data(repeating: 0xFF, count: 128), Data([1, 0, 1])),  // 1024 bits
            (Data([0x7F]) + Data(repeating: 0xFF, count: 255), Data([1, 0, 1])),  // 2047 bits
            (Data(repeating: 0xFF, count: 1025), Data([1, 0, 1])),  // 8200 bits
            (Data(repeating: 0xFF, count: 255) + Data([0xFE]), Data([1, 0, 1])),  // even modulus
            (Data(repeating: 0xFF, count: 256), Data()),
            (Data(repeating: 0xFF, count: 256), Data([0, 0])),
            (Data(repeating: 0xFF, count: 256), Data([1])),
            (Data(repeating: 0xFF, count: 256), Data([1, 0, 0])),  // even
            (Data(repeating: 0xFF, count: 256), Data([2, 0, 0, 0, 1])),  // 2³³ + 1
        ])
    func refused(n: Data, e: Data) {
        #expect(RSAPublicKey(n: n, e: e) == nil)
    }

    @Test(
        "accepted at the rules' edges, and so by BoringSSL too (the rules are never looser than it)",
        arguments: [
            (Data([0x80]) + Data(repeating: 0xFF, count: 255), Data([3])),  // 2048 bits, e = 3
            (Data(repeating: 0xFF, count: 1024), Data([1, 0, 1])),  // 8192 bits
            (Data(repeating: 0xFF, count: 256), Data([1, 0xFF, 0xFF, 0xFF, 0xFF])),  // 2³³ − 1
        ])
    func accepted(n: Data, e: Data) {
        #expect(RSAPublicKey(n: n, e: e) != nil)
    }

    @Test("a signature one byte short or long is refused before the check")
    func signatureLength() throws {
        let key = try #require(RSAPublicKey(n: Self.n, e: Self.e))
        #expect(key.signatureLength == 256)
        #expect(!RS256.isValid(Data(repeating: 1, count: 255), for: Data("x".utf8), key: key))
        #expect(!RS256.isValid(Data(repeating: 1, count: 257), for: Data("x".utf8), key: key))
    }
}
