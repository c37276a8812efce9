#if canImport(Security)
import Foundation
import Security

/// Keeps credentials in the Keychain (Apple platforms), as the Facebook SDK keeps its token cache.
/// Compiled only where Security exists; `FileCredentialStore` is its Linux counterpart.
public actor KeychainCredentialStore: CredentialStore {
    private let service: String
    private let account: String

    /// A store under `service` (e.g. `com.example.app.latchkey`) and `account`.
    public init(service: String, account: String = "session") {
        self.service = service
        self.account = account
    }

    private var query: [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
    }

    /// The stored credentials; unreadable data is removed and `nil`.
    public func load() throws -> StoredCredentials? {
        var lookup = query
        lookup[kSecReturnData as String] = true
        lookup[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(lookup as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status: status) }
        guard let credentials = try? JSONDecoder().decode(StoredCredentials.self, from: data) else {
            try clear()
            return nil
        }
        return credentials
    }

    /// Replaces the stored credentials (readable after first unlock, this device only).
    public func save(_ credentials: StoredCredentials) throws {
        try clear()
        var item = query
        item[kSecValueData as String] = try JSONEncoder().encode(credentials)
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let status = SecItemAdd(item as CFDictionary, nil)
        guard status == errSecSuccess else { throw KeychainError(status: status) }
    }

    /// Removes them.
    public func clear() throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
    }
}

/// A Keychain call failed with `status`.
public struct KeychainError: Error, Sendable {
    /// The `OSStatus`.
    public let status: OSStatus
}
#endif
