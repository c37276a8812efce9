// COMPILE-ONLY STAND-IN for Apple's Security framework, keys: it mirrors the pages
// https://developer.apple.com/documentation/security/seckeycreatewithdata(_:_:_:),
// https://developer.apple.com/documentation/security/seckeyverifysignature(_:_:_:_:_:),
// https://developer.apple.com/documentation/security/seckeyalgorithm and the key attribute keys
// (kSecAttrKeyType, kSecAttrKeyTypeRSA, kSecAttrKeyClass, kSecAttrKeyClassPublic), declaring only
// what Sources/LatchkeyCrypto/Apple uses, so the SDK's Apple RS256 is type-checked on every Linux
// build. Nothing is verified: no key can be made, every signature is refused. Core Foundation's
// types are spelled as the Foundation classes they are toll-free bridged to (Security.swift).

import Foundation

/// Apple: the Core Foundation data type, toll-free bridged to `NSData` (and so to `Data`).
public typealias CFData = NSData
/// Apple: the Core Foundation error type, toll-free bridged to `NSError`.
public typealias CFError = NSError

/// Apple: an object that represents a cryptographic key.
public final class SecKey {}

/// Apple: the algorithms a key operation uses (`SecKeyAlgorithm`, a `CFString` wrapper).
public struct SecKeyAlgorithm: RawRepresentable, Hashable, Sendable {
    /// The algorithm's name.
    public let rawValue: String
    /// Creates an algorithm from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Apple: RSA signature with PKCS#1 v1.5 padding over the SHA-256 digest of the message.
    public static let rsaSignatureMessagePKCS1v15SHA256 = SecKeyAlgorithm(
        rawValue: "algid:sign:RSA:message-PKCS1v15:SHA256")
}

/// Apple: the key's type attribute.
public var kSecAttrKeyType: CFString { "type" }
/// Apple: an RSA key.
public var kSecAttrKeyTypeRSA: CFString { "42" }
/// Apple: the key's class attribute.
public var kSecAttrKeyClass: CFString { "kcls" }
/// Apple: a public key.
public var kSecAttrKeyClassPublic: CFString { "0" }

// swift-format-ignore: AlwaysUseLowerCamelCase
/// Apple: restores a key from an external representation of that key (for an RSA public key,
/// PKCS #1 `RSAPublicKey` DER). The stand-in makes none.
public func SecKeyCreateWithData(
    _ keyData: CFData, _ attributes: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecKey? {
    nil
}

// swift-format-ignore: AlwaysUseLowerCamelCase
/// Apple: verifies a cryptographic signature. The stand-in refuses every one.
public func SecKeyVerifySignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ signedData: CFData, _ signature: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> Bool {
    false
}
