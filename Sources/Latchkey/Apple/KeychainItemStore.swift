// The Keychain as a SecureItemStore: a few lines of glue, since what to store, when to write and what
// to do with a damaged item are decided in LatchkeyCore (SecureItemCredentialStore), where they are
// tested on every platform. Compiled on Apple platforms, and on Linux only by the test target
// LatchkeyAppleAdapterCheck, against compile-only stand-ins of Security (Tests/AppleStandIns, mapped onto
// the name Security there alone); the platform test is a second guard that a Linux build of Latchkey
// never gets a fake Keychain.
#if canImport(Security) && (canImport(Darwin) || LATCHKEY_APPLE_STAND_INS)
import Foundation
import LatchkeyCore
import Security

/// The Keychain as a ``SecureItemStore``: one generic-password item per account, under `service`.
///
/// Apps rarely build one themselves: `credentialStore: .keychain(service: "com.example.app")` keeps
/// the session in it. A write updates the item in place, so another process (an extension sharing
/// `accessGroup`) never sees a moment without one, and the item keeps its access settings.
public struct KeychainItemStore: SecureItemStore {
    /// The items' `kSecAttrService`: keeps this app's items apart from other code's in the same
    /// Keychain (e.g. `com.example.app.latchkey`).
    public let service: String
    /// The items' `kSecAttrAccessGroup`, to share them with an app extension or another app of the
    /// team; `nil` is the app's default group.
    public let accessGroup: String?
    /// When the items can be read (`kSecAttrAccessible`); applied on every write.
    public let accessibility: KeychainAccessibility
    /// Whether to use the data protection keychain (`kSecUseDataProtectionKeychain`). On macOS the
    /// default file-based keychain ignores `accessibility` and access groups; the data protection
    /// one honours them, as on iOS, but needs a signed app with a keychain entitlement (an unsigned
    /// command-line tool gets `errSecMissingEntitlement`: pass `false` there).
    public let usesDataProtectionKeychain: Bool

    /// A store of items under `service`.
    /// - Parameters:
    ///   - accessGroup: a Keychain access group the app is entitled to, to share the session.
    ///   - accessibility: by default after the first unlock, this device only, so a background
    ///     refresh works while the device is locked and the tokens never leave the device. Avoid the
    ///     kinds without `ThisDeviceOnly`: a backup restored onto a second device would carry the
    ///     single-use refresh token there, and the first refresh on either device would revoke the
    ///     session as stolen.
    ///   - usesDataProtectionKeychain: see ``usesDataProtectionKeychain``.
    public init(
        service: String, accessGroup: String? = nil,
        accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly, usesDataProtectionKeychain: Bool = true
    ) {
        self.service = service
        self.accessGroup = accessGroup
        self.accessibility = accessibility
        self.usesDataProtectionKeychain = usesDataProtectionKeychain
    }

    /// The item's data (`SecItemCopyMatching`), or `nil` when there is no item.
    public func read(account: String) throws -> Data? {
        var query = itemQuery(account: account)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw KeychainError(status: status) }
        guard let data = result as? Data else { throw KeychainError(status: errSecDecode) }
        return data
    }

    /// Updates the item in place (`SecItemUpdate`), or adds it when there is none; if another process
    /// added it in between (`errSecDuplicateItem`), updates that one.
    public func write(_ data: Data, account: String) throws {
        let query = itemQuery(account: account)
        let changes: [String: Any] = [
            kSecValueData as String: data, kSecAttrAccessible as String: accessibility.attributeValue,
        ]
        var status = SecItemUpdate(query as CFDictionary, changes as CFDictionary)
        if status == errSecItemNotFound {
            let item = query.merging(changes) { _, change in change }
            status = SecItemAdd(item as CFDictionary, nil)
            if status == errSecDuplicateItem {
                status = SecItemUpdate(query as CFDictionary, changes as CFDictionary)
            }
        }
        guard status == errSecSuccess else { throw KeychainError(status: status) }
    }

    /// Removes the item (`SecItemDelete`); a missing item is not an error.
    public func delete(account: String) throws {
        let status = SecItemDelete(itemQuery(account: account) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
    }

    /// Items of one service and access group share one lock across every store instance.
    public var lockName: String { "keychain:\(service):\(accessGroup ?? "")" }

    /// The attributes that name the item: class, service, account, and the access group when given.
    private func itemQuery(account: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        if usesDataProtectionKeychain { query[kSecUseDataProtectionKeychain as String] = true }
        return query
    }
}

/// A Keychain call failed. The `OSStatus` is kept so an app, and the SDK's log, can tell the cases
/// apart (e.g. `errSecInteractionNotAllowed` while the device is locked, `errSecMissingEntitlement`
/// for an access group the app may not use).
public struct KeychainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The result code the Security framework returned.
    public let status: OSStatus

    /// An error for `status` (also for tests of code that handles Keychain failures).
    public init(status: OSStatus) { self.status = status }

    /// `Keychain error <status>`; look the code up in Apple's Security result codes.
    public var description: String { "Keychain error \(status)" }
}

extension KeychainAccessibility {
    /// The `kSecAttrAccessible…` constant this case names.
    fileprivate var attributeValue: CFString {
        switch self {
        case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
        case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        case .whenUnlocked: kSecAttrAccessibleWhenUnlocked
        case .whenPasscodeSetThisDeviceOnly: kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
        }
    }
}

extension CredentialStore where Self == SecureItemCredentialStore {
    /// Credentials in the Keychain, so apps write `credentialStore: .keychain(service: "com.example.app")`.
    /// - Parameters:
    ///   - service: names this app's item apart from other code's in the Keychain.
    ///   - accessGroup: a Keychain access group, to share the session with an app extension.
    ///   - accessibility: when the item can be read; the default lets background refreshes run while
    ///     the device is locked and keeps the tokens on this device.
    ///   - account: the item's account name, for apps that keep several sessions.
    ///   - lockFileURL: a file in a shared container (app group), to coordinate refreshes with an
    ///     extension; the Keychain has no lock of its own. `nil` coordinates within this process.
    ///   - usesDataProtectionKeychain: see ``KeychainItemStore/usesDataProtectionKeychain``.
    public static func keychain(
        service: String, accessGroup: String? = nil,
        accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly, account: String = "session",
        lockFileURL: URL? = nil, usesDataProtectionKeychain: Bool = true
    ) -> SecureItemCredentialStore {
        SecureItemCredentialStore(
            items: KeychainItemStore(
                service: service, accessGroup: accessGroup, accessibility: accessibility,
                usesDataProtectionKeychain: usesDataProtectionKeychain),
            account: account, lockFileURL: lockFileURL)
    }

    /// The session shared by an app and its extensions (a widget, a share extension): one
    /// Keychain item both can read, and one lock file both refresh under, so that neither spends a
    /// refresh token the other holds and each adopts the session the other signs in. Every target
    /// passes the same three values; each needs the Keychain Sharing capability with
    /// `accessGroup` (written with the team prefix, e.g. `ABCDE12345.com.example.shared`) and the
    /// App Groups capability with the group whose container is `appGroupContainer`
    /// (`FileManager.default.containerURL(forSecurityApplicationGroupIdentifier:)`).
    ///
    /// The default store (`.keychain(service:)` under the app's bundle identifier) is not shared:
    /// an extension's default access group is its own.
    public static func sharedKeychain(
        service: String, accessGroup: String, appGroupContainer: URL,
        accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly
    ) -> SecureItemCredentialStore {
        keychain(
            service: service, accessGroup: accessGroup, accessibility: accessibility,
            lockFileURL: appGroupContainer.appendingPathComponent("\(service).latchkey.lock"))
    }
}
#endif
