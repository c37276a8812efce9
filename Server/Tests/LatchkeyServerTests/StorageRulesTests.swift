import Foundation
import LatchkeyAPI
import Testing

@testable import LatchkeyServer

/// The domain rules every storage backend applies (`StorageRules`), checked once here; the storage
/// contract suite checks that each backend applies them.
@Suite("Storage rules, shared by every backend")
struct StorageRulesTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func login(mapped: [String: JSONValue], refresh: Bool) -> LoginRecord {
        LoginRecord(
            identity: StoredIdentity(
                provider: "facebook", subject: "1234", appID: "100000000000001", grantedPermissions: ["email"],
                firstSeen: now, lastSeen: now),
            mappedProperties: mapped, refreshProperties: refresh, newUserID: "user-1", session: nil)
    }

    @Test("a sign-in overwrites mapped properties only when refreshing, and writes nothing unchanged")
    func signInMerge() {
        let stored: [String: JSONValue] = ["name": "Alice", "theme": "dark"]
        #expect(
            StorageRules.propertiesAfterSignIn(
                stored: stored, login: Self.login(mapped: ["name": "Alicia"], refresh: true))
                == ["name": "Alicia", "theme": "dark"])
        #expect(
            StorageRules.propertiesAfterSignIn(
                stored: stored, login: Self.login(mapped: ["name": "Alicia"], refresh: false))
                == nil)
        #expect(
            StorageRules.propertiesAfterSignIn(
                stored: stored, login: Self.login(mapped: ["name": "Alice"], refresh: true))
                == nil)
        #expect(
            StorageRules.propertiesAfterSignIn(stored: stored, login: Self.login(mapped: [:], refresh: true)) == nil)
    }

    @Test(
        "a sign-in's stamp: equal for equal mapped properties, none when nothing merges, and merging twice is a no-op")
    func signInStamp() throws {
        let mapped: [String: JSONValue] = ["name": "Alice", "email": "a@example.com", "age": 30]
        let stamp = try #require(StorageRules.signInPropertiesStamp(Self.login(mapped: mapped, refresh: true)))
        #expect(stamp.count == 32)
        // The same values built in another order (another process's hash seed) stamp the same.
        var reordered: [String: JSONValue] = [:]
        for key in mapped.keys.sorted().reversed() { reordered[key] = mapped[key] }
        #expect(StorageRules.signInPropertiesStamp(Self.login(mapped: reordered, refresh: true)) == stamp)
        #expect(StorageRules.signInPropertiesStamp(Self.login(mapped: ["name": "Alicia"], refresh: true)) != stamp)
        #expect(StorageRules.signInPropertiesStamp(Self.login(mapped: mapped, refresh: false)) == nil)
        #expect(StorageRules.signInPropertiesStamp(Self.login(mapped: [:], refresh: true)) == nil)
        // What makes the stamp sound: after one merge, the same login merges nothing.
        let stored: [String: JSONValue] = ["name": "Bob", "theme": "dark"]
        let login = Self.login(mapped: mapped, refresh: true)
        let merged = try #require(StorageRules.propertiesAfterSignIn(stored: stored, login: login))
        #expect(StorageRules.propertiesAfterSignIn(stored: merged, login: login) == nil)
    }

    @Test("a client's update sets keys and removes those given null")
    func update() {
        #expect(
            StorageRules.propertiesAfterUpdate(
                current: ["a": 1, "b": 2], changes: ["b": .null, "c": "three", "missing": .null])
                == ["a": 1, "c": "three"])
    }

    @Test("a sign-in's audit event names what happened, with provider, subject, app and method, never a token")
    func auditEvent() {
        let login = Self.login(mapped: [:], refresh: true)
        let created = StorageRules.signInEvent(login, userID: "user-1", created: true)
        #expect(created.type.rawValue == "user.created" && created.userID == "user-1")
        #expect(created.detail == ["provider": "facebook", "subject": "1234", "app_id": "100000000000001"])
        var apple = login
        apple.session = NewSession(
            id: "s", refreshTokenHash: Data(), createdAt: Self.now, refreshExpiresAt: Self.now, method: .apple)
        #expect(StorageRules.signInEvent(apple, userID: "user-1", created: true).detail["method"] == "apple")
        var easy = login
        easy.authorizationCode = NewAuthorizationCode(
            hash: Data(), clientID: "c", redirectURI: "r", codeChallenge: "x", sessionID: "s", scope: [],
            expiresAt: Self.now)
        #expect(StorageRules.signInEvent(easy, userID: "user-1", created: true).detail["method"] == "easy_login")
        #expect(StorageRules.signInEvent(login, userID: "user-1", created: false).type.rawValue == "user.signed_in")
    }
}
