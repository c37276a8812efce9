import Foundation
import LatchkeyServer
import Testing

/// The published vectors of what the second factor is built on: RFC 6238's TOTP (SHA-1), RFC 4648's
/// base32, and the recovery codes' and sealed secrets' own rules.
@Suite("Second factor: vectors and rules")
struct SecondFactorVectorTests {
    /// RFC 6238 Appendix B, SHA-1 rows: the ASCII secret "12345678901234567890", 8 digits.
    static let rfc6238: [(time: TimeInterval, code: String)] = [
        (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
        (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
    ]

    @Test("RFC 6238's SHA-1 test vectors", arguments: rfc6238)
    func totpVectors(_ vector: (time: TimeInterval, code: String)) {
        let secret = Data("12345678901234567890".utf8)
        let step = TOTP.step(at: Date(timeIntervalSince1970: vector.time))
        #expect(TOTP.code(secret: secret, step: step, digits: 8) == vector.code)
        // The 6-digit code apps show is the last six digits of the same truncation.
        #expect(TOTP.code(secret: secret, step: step) == String(vector.code.suffix(6)))
    }

    @Test("a code matches within the skew only, names its step, and must be six digits")
    func matching() {
        let secret = Data("12345678901234567890".utf8)
        let now = Date(timeIntervalSince1970: 1_111_111_111)
        let step = TOTP.step(at: now)
        for offset: Int64 in [-1, 0, 1] {
            let code = TOTP.code(secret: secret, step: step + offset)
            #expect(TOTP.matchingStep(code, secret: secret, at: now, skew: 1) == step + offset)
        }
        #expect(TOTP.matchingStep(TOTP.code(secret: secret, step: step + 2), secret: secret, at: now, skew: 1) == nil)
        #expect(TOTP.matchingStep(TOTP.code(secret: secret, step: step - 1), secret: secret, at: now, skew: 0) == nil)
        for bad in ["", "12345", "1234567", "12345a", "１２３４５６", " 12345"] {
            #expect(TOTP.matchingStep(bad, secret: secret, at: now, skew: 1) == nil, "\(bad)")
        }
    }

    @Test("the otpauth URI escapes the label and names every parameter")
    func uri() {
        let uri = TOTP.uri(secret: Data("12345678901234567890".utf8), issuer: "Acme & Co", account: "ann@example.com")
        #expect(
            uri
                == "otpauth://totp/Acme%20%26%20Co:ann%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
                + "&issuer=Acme%20%26%20Co&algorithm=SHA1&digits=6&period=30")
    }

    /// RFC 4648 §10.
    static let base32Vectors: [(String, String)] = [
        ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
        ("foobar", "MZXW6YTBOI"),
    ]

    @Test("base32 as RFC 4648's vectors (unpadded), read back in any case, padded or not", arguments: base32Vectors)
    func base32(_ vector: (String, String)) {
        #expect(Base32.encode(Data(vector.0.utf8)) == vector.1)
        #expect(Base32.decode(vector.1) == Data(vector.0.utf8))
        #expect(Base32.decode(vector.1.lowercased() + "===") == Data(vector.0.utf8))
    }

    @Test("base32 refuses characters outside its alphabet")
    func base32Refuses() {
        #expect(Base32.decode("MZXW1") == nil)
        #expect(Base32.decode("MZ-XW") == nil)
    }

    @Test("recovery codes: ten distinct 10-character codes, typed back leniently, hashed per user")
    func recoveryCodes() throws {
        let codes = RecoveryCodes.generate()
        #expect(codes.count == 10 && Set(codes).count == 10)
        for code in codes {
            #expect(code.count == 11 && code.dropFirst(5).first == "-", "\(code)")
            #expect(RecoveryCodes.normalize(code) == code.replacingOccurrences(of: "-", with: ""))
        }
        #expect(RecoveryCodes.normalize("AB1CD-0EF2G") == "ab1cd0ef2g")
        #expect(RecoveryCodes.normalize("ablcd oefzg") == "ab1cd0efzg")
        #expect(RecoveryCodes.normalize("abcde-fghj") == nil)
        #expect(RecoveryCodes.normalize("abcde-fghju") == nil, "u is not in the alphabet")
        let hash = try #require(RecoveryCodes.hash("7k3qd-x9m2a", userID: "u1"))
        #expect(RecoveryCodes.hash("7K3QD X9M2A", userID: "u1") == hash)
        #expect(RecoveryCodes.hash("7k3qd-x9m2a", userID: "u2") != hash)
    }

    @Test("a sealed factor secret opens only for its user and factor, under a known key")
    func sealing() throws {
        let kek = KeyEncryptionKey.generate().key
        let sealing = FactorSecretSealing(protection: SigningKeyProtection(current: kek))
        let secret = TOTP.newSecret()
        let sealed = try sealing.seal(secret, userID: "u", factorID: "f")
        #expect(sealed.prefix(4) == Data("LKF1".utf8) && !sealed.contains(secret))
        #expect(sealing.open(sealed, userID: "u", factorID: "f") == secret)
        #expect(sealing.open(sealed, userID: "u", factorID: "g") == nil)
        #expect(sealing.open(sealed, userID: "v", factorID: "f") == nil)
        let other = FactorSecretSealing(protection: SigningKeyProtection(current: KeyEncryptionKey.generate().key))
        #expect(other.open(sealed, userID: "u", factorID: "f") == nil)
        let rotated = FactorSecretSealing(
            protection: SigningKeyProtection(current: KeyEncryptionKey.generate().key, previous: [kek]))
        #expect(rotated.open(sealed, userID: "u", factorID: "f") == secret)
    }
}

extension Data {
    /// Whether `other` appears anywhere in these bytes.
    fileprivate func contains(_ other: Data) -> Bool { range(of: other) != nil }
}
