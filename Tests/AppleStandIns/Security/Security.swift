// COMPILE-ONLY STAND-IN for Apple's Security framework, Keychain items: it mirrors the pages
// https://developer.apple.com/documentation/security/keychain-items (SecItemCopyMatching(_:_:),
// SecItemAdd(_:_:), SecItemUpdate(_:_:), SecItemDelete(_:), the item class, attribute, search and
// return keys, kSecAttrAccessible values) and
// https://developer.apple.com/documentation/security/security-framework-result-codes.
//
// It declares, with Apple's spellings and signatures, only what Sources/Latchkey/Apple uses, so the
// Keychain adapter is type-checked on every Linux build (target LatchkeyAppleAdapterCheck). Nothing is
// stored: every function fails. Package.swift declares this target only when the manifest is built on
// Linux; it is never built for, or shipped on, an Apple platform, and the Latchkey target never uses it.
//
// Core Foundation is not available to Swift on Linux; its types are spelled here as the Foundation
// classes they are toll-free bridged to, so `kSecClass as String` and `query as CFDictionary`
// compile as they do on Apple platforms, and passing a `[String: Any]` where a CFDictionary is expected
// without `as` is refused as it is there. Apple declares the constants as C globals (`let`); they are
// computed properties here because an `NSString` global is not concurrency-safe on Linux.

import Foundation

/// Apple: `typealias OSStatus = Int32` (MacTypes); the result code of every Keychain call.
public typealias OSStatus = Int32
/// Apple: the Core Foundation string type, toll-free bridged to `NSString` (and so to `String`).
public typealias CFString = NSString
/// Apple: the Core Foundation dictionary type, toll-free bridged to `NSDictionary`.
public typealias CFDictionary = NSDictionary
/// Apple: `typealias CFTypeRef = AnyObject`; what `SecItemCopyMatching` hands back.
public typealias CFTypeRef = AnyObject

/// What the stand-in functions return: Apple's errSecUnimplemented, since nothing is implemented.
private let unimplemented: OSStatus = -4

// MARK: - Functions (Apple: SecItem.h)

// swift-format-ignore: AlwaysUseLowerCamelCase
/// Apple: returns one or more items that match a search query, or copies their attributes.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    unimplemented
}

// swift-format-ignore: AlwaysUseLowerCamelCase
/// Apple: adds one or more items to a keychain.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    unimplemented
}

// swift-format-ignore: AlwaysUseLowerCamelCase
/// Apple: modifies items that match a search query.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    unimplemented
}

// swift-format-ignore: AlwaysUseLowerCamelCase
/// Apple: deletes items that match a search query.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    unimplemented
}

// MARK: - Result codes (Apple: `var errSec…: OSStatus { get }`)

/// Apple: no error.
public var errSecSuccess: OSStatus { 0 }
/// Apple: the specified item could not be found in the keychain.
public var errSecItemNotFound: OSStatus { -25300 }
/// Apple: the specified item already exists in the keychain.
public var errSecDuplicateItem: OSStatus { -25299 }
/// Apple: unable to decode the provided data.
public var errSecDecode: OSStatus { -26275 }

// MARK: - Item class

/// Apple: the dictionary key whose value is the item's class.
public var kSecClass: CFString { "kSecClass" }
/// Apple: the value that indicates a generic password item.
public var kSecClassGenericPassword: CFString { "kSecClassGenericPassword" }

// MARK: - Attributes

/// Apple: the key whose value is the item's service.
public var kSecAttrService: CFString { "kSecAttrService" }
/// Apple: the key whose value is the item's account name.
public var kSecAttrAccount: CFString { "kSecAttrAccount" }
/// Apple: the key whose value is the access group the item is in.
public var kSecAttrAccessGroup: CFString { "kSecAttrAccessGroup" }
/// Apple: the key whose value indicates when the item's data can be accessed.
public var kSecAttrAccessible: CFString { "kSecAttrAccessible" }

// MARK: - kSecAttrAccessible values

/// Apple: accessible after the first unlock until restart; not migrated to a new device.
public var kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString {
    "kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly"
}
/// Apple: accessible after the first unlock until restart.
public var kSecAttrAccessibleAfterFirstUnlock: CFString { "kSecAttrAccessibleAfterFirstUnlock" }
/// Apple: accessible only while the device is unlocked; not migrated to a new device.
public var kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString { "kSecAttrAccessibleWhenUnlockedThisDeviceOnly" }
/// Apple: accessible only while the device is unlocked.
public var kSecAttrAccessibleWhenUnlocked: CFString { "kSecAttrAccessibleWhenUnlocked" }
/// Apple: accessible only while unlocked, and only if a passcode is set.
public var kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString {
    "kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly"
}

// MARK: - Value, return and search keys

/// Apple: `let kSecUseDataProtectionKeychain: CFString` (macOS 10.15, iOS 13): on macOS, use the
/// iOS-style data protection keychain instead of the file-based one.
public var kSecUseDataProtectionKeychain: CFString { "kSecUseDataProtectionKeychain" }
/// Apple: the key whose value is the item's data.
public var kSecValueData: CFString { "kSecValueData" }
/// Apple: the key whose value says whether to return the item's data.
public var kSecReturnData: CFString { "kSecReturnData" }
/// Apple: the key whose value is the maximum number of results to return.
public var kSecMatchLimit: CFString { "kSecMatchLimit" }
/// Apple: the value that limits results to one item.
public var kSecMatchLimitOne: CFString { "kSecMatchLimitOne" }
