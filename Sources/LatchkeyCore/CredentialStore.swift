import Foundation
import LatchkeyCrypto

/// The tokens that keep a user signed in across launches.
public struct StoredCredentials: Sendable, Equatable, Codable {
    /// The current access token.
    public var accessToken: String
    /// When it expires.
    public var accessTokenExpiresAt: Date
    /// The current refresh token (single use; replaced on every refresh).
    public var refreshToken: String
    /// The user, as last seen.
    public var user: LatchkeyUser
    /// The server the tokens belong to, so a store shared by two configurations cannot mix them.
    public var serverURL: URL
    /// When the tokens were last refreshed.
    public var refreshedAt: Date

    /// Creates stored credentials.
    public init(
        accessToken: String, accessTokenExpiresAt: Date, refreshToken: String, user: LatchkeyUser, serverURL: URL,
        refreshedAt: Date
    ) {
        self.accessToken = accessToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.refreshToken = refreshToken
        self.user = user
        self.serverURL = serverURL
        self.refreshedAt = refreshedAt
    }
}

extension StoredCredentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The session id (`sid`) the access token names, read without checking its signature: only to
    /// tell whether two stored values are the same session. `nil` for a token that is not a JWT.
    public var sessionID: String? {
        CompactJWS(accessToken)?.claims["sid"]?.stringValue
    }

    /// Whether `other` is the same session (possibly refreshed since): the same `sid`. Tokens
    /// without one (not a Latchkey server's) are the same session only when a token is identical,
    /// since two sessions of one user must never be taken for one.
    func isSameSession(as other: StoredCredentials) -> Bool {
        guard serverURL == other.serverURL else { return false }
        if let sessionID, let otherID = other.sessionID { return sessionID == otherID }
        return refreshToken == other.refreshToken || accessToken == other.accessToken
    }

    /// The user and expiry, never the tokens (they end up in logs otherwise).
    public var description: String {
        "StoredCredentials(user: \(user.id), accessTokenExpiresAt: \(accessTokenExpiresAt), tokens: <redacted>)"
    }
    /// Same as `description`.
    public var debugDescription: String { description }
    /// What `dump` and debuggers show: the tokens left out.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "user": user, "accessTokenExpiresAt": accessTokenExpiresAt, "serverURL": serverURL,
                "refreshedAt": refreshedAt,
            ])
    }
}

/// Where credentials persist: the Keychain on Apple platforms, a file on Linux, memory in tests.
///
/// One `LatchkeyClient` per process and store is the rule. Where two clients share a store anyway
/// (an app and its extension, or a client created twice), each re-reads the store before
/// refreshing, inside ``withExclusiveAccess(_:)``, so the second one adopts the tokens the first
/// one just got instead of spending the same single-use refresh token again (which the server
/// treats as theft, revoking the session).
public protocol CredentialStore: Sendable {
    /// The stored credentials, if any.
    func load() async throws -> StoredCredentials?
    /// Replaces the stored credentials.
    func save(_ credentials: StoredCredentials) async throws
    /// Removes them (sign-out).
    func clear() async throws
    /// Runs `body` (load, refresh over the network, save) while no other client refreshing through
    /// this store does. The default covers nothing; the SDK's stores cover every client in the
    /// process, and `FileCredentialStore` every process too.
    func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T
}

extension CredentialStore {
    /// How many times the SDK tries a write before it reports the failure
    /// (``SessionSnapshot/credentialStoreError``); the next refresh or sync writes again.
    static var writeAttempts: Int { 3 }

    /// Saves, trying again at once when the store fails (a Keychain busy with another process);
    /// throws the last failure when every try failed. Every save the SDK makes goes through this.
    func saveRetrying(_ credentials: StoredCredentials) async throws {
        try await retrying { try await save(credentials) }
    }

    /// Clears, trying again like ``saveRetrying(_:)``: a sign-out whose clear failed would leave a
    /// session in the store for the next launch to restore.
    func clearRetrying() async throws {
        try await retrying { try await clear() }
    }

    private func retrying(_ write: () async throws -> Void) async throws {
        for _ in 1..<Self.writeAttempts {
            do { return try await write() } catch {}
        }
        try await write()
    }

    /// No coordination: runs `body`.
    public func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await body()
    }
}

/// Keeps credentials in memory only (tests, or apps that want no persistence).
public actor InMemoryCredentialStore: CredentialStore, PendingEasyLoginStore {
    private var credentials: StoredCredentials?
    private var pendingEasyLogin: PendingEasyLogin?
    private let lock = AsyncLock()
    /// Creates an empty store.
    public init() {}
    /// The stored credentials.
    public func load() -> StoredCredentials? { credentials }
    /// Replaces them.
    public func save(_ credentials: StoredCredentials) { self.credentials = credentials }
    /// Removes them.
    public func clear() { credentials = nil }
    /// The pending Easy Login attempt.
    public func loadPendingEasyLogin() -> PendingEasyLogin? { pendingEasyLogin }
    /// Keeps the attempt.
    public func savePendingEasyLogin(_ login: PendingEasyLogin) { pendingEasyLogin = login }
    /// Forgets the attempt.
    public func clearPendingEasyLogin() { pendingEasyLogin = nil }
    /// Runs `body` alone among the clients sharing this store.
    public func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await lock.run(body)
    }
}

/// Keeps credentials in a JSON file readable by the owner only, written atomically.
///
/// Refreshes are coordinated across processes through a lock file beside it (`NAME.lock`, `flock`):
/// an app and its extension may share one file in an app-group container.
public actor FileCredentialStore: CredentialStore, PendingEasyLoginStore {
    private let url: URL

    /// A store at `url`; its directory is created on first save.
    public init(url: URL) { self.url = url }

    /// Runs `body` while holding `NAME.lock`, excluding every other store over this file, in this
    /// process or another.
    public func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await FileLock.run(at: url.appendingPathExtension("lock"), body)
    }

    /// The stored credentials; a missing file is `nil`, a corrupt one is removed and `nil`.
    public func load() throws -> StoredCredentials? { try read(StoredCredentials.self, at: url) }

    /// Writes atomically to a file created with permissions 0600 (in a directory created 0700):
    /// the tokens are never readable by others, not even for a moment (`PrivateFile`).
    public func save(_ credentials: StoredCredentials) throws {
        try PrivateFile.replace(url, with: JSONEncoder().encode(credentials))
    }

    /// Deletes the file.
    public func clear() throws { try Self.remove(url) }

    /// The pending Easy Login attempt, kept in `NAME.pending` (0600 like the session); one that
    /// does not decode is removed and `nil`.
    public func loadPendingEasyLogin() throws -> PendingEasyLogin? { try read(PendingEasyLogin.self, at: pendingURL) }

    /// Writes the attempt atomically, readable by the owner only.
    public func savePendingEasyLogin(_ login: PendingEasyLogin) throws {
        try PrivateFile.replace(pendingURL, with: JSONEncoder().encode(login))
    }

    /// Deletes `NAME.pending`.
    public func clearPendingEasyLogin() throws { try Self.remove(pendingURL) }

    private var pendingURL: URL { url.appendingPathExtension("pending") }

    /// The value in `file`: `nil` when missing; removed and `nil` when it does not decode (a newer
    /// app version's format, or damage), so the person signs in again instead of being stuck.
    private func read<Value: Decodable>(_ type: Value.Type, at file: URL) throws -> Value? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let data = try Data(contentsOf: file)
        guard let value = try? JSONDecoder().decode(type, from: data) else {
            try? FileManager.default.removeItem(at: file)
            return nil
        }
        return value
    }

    private static func remove(_ file: URL) throws {
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
    }
}
