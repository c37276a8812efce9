import Foundation

/// A keychain-like store of small secret items, one per account name.
///
/// The SDK's Keychain support is this protocol plus a few lines of Apple glue
/// (`KeychainItemStore` in `import Latchkey`): what to store, how to handle a corrupt item, and
/// when to write are decided here, where they are tested on every platform.
public protocol SecureItemStore: Sendable {
    /// The item's bytes, or `nil` when there is none.
    func read(account: String) async throws -> Data?
    /// Creates the item or updates it in place. Implementations update an existing item rather
    /// than delete and re-add it, so there is never a moment without one (another process reading
    /// then would conclude the person signed out) and the item keeps its access settings.
    func write(_ data: Data, account: String) async throws
    /// Removes the item; removing a missing item is not an error.
    func delete(account: String) async throws
    /// Names the place the items live (e.g. the Keychain service and access group), so that every
    /// store over the same items in this process shares one lock, however many instances the app
    /// creates.
    var lockName: String { get }
}

extension SecureItemStore {
    /// The type's name: instances of a type without a better name share one lock.
    public var lockName: String { String(reflecting: Self.self) }
}

/// One lock per name for the whole process (``SecureItemCredentialStore`` instances over the same
/// items find the same lock here).
actor NamedLocks {
    static let shared = NamedLocks()
    private var locks: [String: AsyncLock] = [:]

    func lock(named name: String) -> AsyncLock {
        if let lock = locks[name] { return lock }
        let lock = AsyncLock()
        locks[name] = lock
        return lock
    }
}

/// Who may read a Keychain item and when: `kSecAttrAccessible…` under names that say it.
public enum KeychainAccessibility: String, Sendable, CaseIterable {
    /// After the first unlock since boot, on this device only (the default: background refreshes
    /// work while the phone is locked, and the tokens never reach a backup or another device).
    case afterFirstUnlockThisDeviceOnly
    /// After the first unlock; also restored from an encrypted backup onto another device.
    case afterFirstUnlock
    /// Only while the device is unlocked, on this device only (no background refresh when locked).
    case whenUnlockedThisDeviceOnly
    /// Only while the device is unlocked; also restored from an encrypted backup.
    case whenUnlocked
    /// Only while unlocked and only when a passcode is set; the item is deleted if the passcode is removed.
    case whenPasscodeSetThisDeviceOnly
}

/// Keeps credentials as one item of a ``SecureItemStore`` (the Keychain on Apple platforms),
/// encoded as JSON.
///
/// Refreshes are coordinated between clients of this process over the same store; give a
/// `lockFileURL` in a shared container (an app group) to coordinate with an extension too, since
/// the Keychain itself offers no lock.
public actor SecureItemCredentialStore: CredentialStore, PendingEasyLoginStore {
    private let items: any SecureItemStore
    private let account: String
    private let lockFileURL: URL?

    /// A store of one item named `account` in `items`.
    /// - Parameter lockFileURL: a file every process sharing the item can open, to coordinate
    ///   refreshes across processes (`flock`); `nil` coordinates within this process only.
    public init(items: any SecureItemStore, account: String = "session", lockFileURL: URL? = nil) {
        self.items = items
        self.account = account
        self.lockFileURL = lockFileURL
    }

    /// The stored credentials; an item that does not decode is removed and `nil` (a newer app
    /// version's format, or damage), so the person signs in again instead of being stuck.
    public func load() async throws -> StoredCredentials? { try await read(StoredCredentials.self, account: account) }

    /// Writes the credentials, updating the item in place.
    public func save(_ credentials: StoredCredentials) async throws {
        try await items.write(JSONEncoder().encode(credentials), account: account)
    }

    /// Removes the item.
    public func clear() async throws {
        try await items.delete(account: account)
    }

    /// The pending Easy Login attempt, kept as a second item (`ACCOUNT.pending-easy-login`) with the
    /// same protection as the session; one that does not decode is removed and `nil`.
    public func loadPendingEasyLogin() async throws -> PendingEasyLogin? {
        try await read(PendingEasyLogin.self, account: pendingAccount)
    }

    /// Keeps the attempt.
    public func savePendingEasyLogin(_ login: PendingEasyLogin) async throws {
        try await items.write(JSONEncoder().encode(login), account: pendingAccount)
    }

    /// Removes the attempt's item.
    public func clearPendingEasyLogin() async throws {
        try await items.delete(account: pendingAccount)
    }

    private var pendingAccount: String { account + ".pending-easy-login" }

    /// The item `account`, decoded; one that does not decode is removed and `nil`.
    private func read<Value: Decodable>(_ type: Value.Type, account: String) async throws -> Value? {
        guard let data = try await items.read(account: account) else { return nil }
        guard let value = try? JSONDecoder().decode(type, from: data) else {
            try? await items.delete(account: account)
            return nil
        }
        return value
    }

    /// Runs `body` alone among the clients of every store over these items in this process, and
    /// among processes when a lock file was given.
    public func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let lock = await NamedLocks.shared.lock(named: items.lockName + "\u{0}" + account)
        return try await lock.run {
            guard let lockFileURL = self.lockFileURL else { return try await body() }
            return try await FileLock.run(at: lockFileURL, body)
        }
    }
}
