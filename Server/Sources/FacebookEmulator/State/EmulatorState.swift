import Crypto
import Foundation
import LatchkeyAPI

/// All mutable emulator state: apps, people, grants, tokens, codes, keys, clock offset, faults and call
/// counts. One actor, so every request sees a consistent world without locks.
actor EmulatorState {
    struct GrantKey: Hashable {
        let appID: String
        let personKey: String
    }

    /// What removing an app for a person did.
    struct AppRemoval: Sendable {
        /// Whether the person had the app (a grant) to remove.
        var hadApp: Bool
        /// How many live tokens died with it.
        var tokensRevoked: Int
    }

    /// An app-scoped id resolved back to its app and person.
    struct ScopedUser: Equatable {
        let appID: String
        let personKey: String
    }

    let lifetimes: Lifetimes
    /// The `iss` of id tokens.
    let issuer: String
    private let wallClock: @Sendable () -> Date
    private var clockOffset: TimeInterval = 0

    private(set) var apps: [String: EmulatorApp] = [:]
    private(set) var appOrder: [String] = []
    private(set) var people: [String: Person] = [:]
    private(set) var personOrder: [String] = []
    private var scopedIndex: [String: ScopedUser] = [:]
    var grants: [GrantKey: Grant] = [:]
    var tokens: [String: AccessTokenRecord] = [:]
    var codes: [String: AuthorizationCode] = [:]
    /// Keys that sign or signed: the first signs new tokens, the others still verify older ones.
    var signingKeys: [SigningKey] = []
    /// Keys published ahead of a rotation, not signing yet.
    var pendingKeys: [SigningKey] = []
    /// Every published key, as the JWKS lists them.
    var keys: [SigningKey] { signingKeys + pendingKeys }
    var faults: [Fault] = []
    var calls: [String: Int] = [:]
    /// The latest Graph requests, oldest first (`GET /_emulator/requests`).
    var requests: [RecordedRequest] = []
    /// Platform rate limits changed through the control API, by app id (others come from the seed).
    var usageLimits: [String: UsageLimits] = [:]
    /// Graph calls charged to each app in the rolling hour.
    var appCalls: [String: CallWindow] = [:]
    /// Calls per person and app, counted only while a per-person limit is set.
    var personCalls: [GrantKey: CallWindow] = [:]
    /// The Sign in with Apple team, when this emulator also plays Apple.
    let appleRegistration: AppleRegistration?
    /// Apple's keys, authorizations, codes and tokens; `nil` without a registration.
    var apple: AppleWorld?

    struct Lifetimes: Sendable {
        let longLivedToken: TimeInterval
        let dataAccess: TimeInterval
        let code: TimeInterval
    }

    init(configuration: EmulatorConfiguration) throws {
        self.wallClock = configuration.clock
        self.issuer = configuration.issuer
        self.appleRegistration = configuration.apple
        self.lifetimes = Lifetimes(
            longLivedToken: configuration.longLivedTokenLifetime, dataAccess: configuration.dataAccessLifetime,
            code: configuration.codeLifetime)
        let start = configuration.clock()
        let seed = configuration.seed
        for app in seed.apps { Self.insert(app, into: &apps, order: &appOrder) }
        for user in seed.users {
            people[user.person.key] = user.person
            personOrder.append(user.person.key)
            for (appID, permissions) in user.grants {
                grants[GrantKey(appID: appID, personKey: user.person.key)] = Grant(
                    granted: Set(permissions), installedAt: start)
            }
        }
        scopedIndex = Self.scopedIndex(appIDs: appOrder, personKeys: personOrder)
        // The same PEM twice would publish one kid twice; keep the first.
        for pem in seed.signingKeys {
            let key = try SigningKey(pem: pem, now: start)
            if !signingKeys.contains(where: { $0.kid == key.kid }) { signingKeys.append(key) }
        }
        if signingKeys.isEmpty { signingKeys = [try SigningKey.generate(now: start)] }
        if let registration = configuration.apple {
            apple = AppleWorld(registration: registration, keys: [try SigningKey.generateApple(now: start)])
        }
    }

    private static func insert(_ app: EmulatorApp, into apps: inout [String: EmulatorApp], order: inout [String]) {
        if apps[app.id] == nil { order.append(app.id) }
        apps[app.id] = app
    }

    // MARK: Clock

    /// The emulator's time: the wall clock plus the offset moved through the control API.
    func now() -> Date { wallClock().addingTimeInterval(clockOffset) }

    /// Moves the emulator's clock forward (or back) and returns the new time.
    func advanceClock(by seconds: TimeInterval) -> Date {
        clockOffset += seconds
        return now()
    }

    /// Sets the emulator's clock to `date` and returns it.
    func setClock(to date: Date) -> Date {
        clockOffset = date.timeIntervalSince(wallClock())
        return now()
    }

    // MARK: Apps and people

    func app(_ id: String) -> EmulatorApp? { apps[id] }

    /// Adds a "Valid OAuth Redirect URI" to an app, as a developer does in the app dashboard.
    /// Returns the app, or `nil` when unknown.
    func addRedirectURI(_ uri: String, appID: String) -> EmulatorApp? {
        guard var app = apps[appID] else { return nil }
        if !app.redirectURIs.contains(uri) { app.redirectURIs.append(uri) }
        apps[appID] = app
        return app
    }

    /// Registers or removes an app's callback URLs, as a developer does in the app dashboard:
    /// each kind in `urls` is set to its value (`nil` removes it); kinds not in `urls` stay.
    /// Returns the app, or `nil` when unknown.
    func setCallbackURLs(_ urls: [CallbackKind: String?], appID: String) -> EmulatorApp? {
        guard var app = apps[appID] else { return nil }
        for (kind, url) in urls { app.setCallbackURL(url, for: kind) }
        apps[appID] = app
        return app
    }

    /// Apps in registration order.
    func allApps() -> [EmulatorApp] { appOrder.compactMap { apps[$0] } }

    func person(key: String) -> Person? { people[key] }

    /// People in seed order, then test users in creation order.
    func allPeople() -> [Person] { personOrder.compactMap { people[$0] } }

    /// The people an app can log in: seeded people, and test users created by that app.
    func people(visibleTo appID: String) -> [Person] {
        allPeople().filter { $0.testUserOf == nil || $0.testUserOf == appID }
    }

    /// The id `personKey` has in `appID`: stable (a hash), numeric and 16 digits, like Facebook's ASIDs.
    nonisolated static func appScopedID(appID: String, personKey: String) -> String {
        let digest = SHA256.hash(data: Data("asid:\(appID):\(personKey)".utf8))
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return String(1_000_000_000_000_000 + value % 9_000_000_000_000_000)
    }

    /// Resolves an app-scoped id to its person; `nil` if the id belongs to another app or nobody.
    func person(scopedID: String, appID: String) -> Person? {
        guard let scoped = scopedIndex[scopedID], scoped.appID == appID else { return nil }
        return people[scoped.personKey]
    }

    /// Resolves an app-scoped id to its app and person, whatever the app.
    func scopedUser(_ scopedID: String) -> ScopedUser? { scopedIndex[scopedID] }

    /// Accepts either a person key (`alice`) or an app-scoped id, as the control API does.
    func resolvePerson(_ reference: String, appID: String) -> Person? {
        people[reference] ?? person(scopedID: reference, appID: appID)
    }

    private static func scopedIndex(appIDs: [String], personKeys: [String]) -> [String: ScopedUser] {
        var index: [String: ScopedUser] = [:]
        for appID in appIDs {
            for key in personKeys {
                index[appScopedID(appID: appID, personKey: key)] = ScopedUser(appID: appID, personKey: key)
            }
        }
        return index
    }

    private func indexScopedID(appID: String, personKey: String) {
        scopedIndex[Self.appScopedID(appID: appID, personKey: personKey)] = ScopedUser(
            appID: appID, personKey: personKey)
    }

    /// Adds a person (the test-user API) and indexes their ids in every app.
    func addPerson(_ person: Person) {
        if people[person.key] == nil { personOrder.append(person.key) }
        people[person.key] = person
        for appID in appOrder { indexScopedID(appID: appID, personKey: person.key) }
    }

    /// Deletes a person with their grants and tokens; their tokens then fail as unparsable.
    func removePerson(key: String) {
        people[key] = nil
        personOrder.removeAll { $0 == key }
        scopedIndex = scopedIndex.filter { $0.value.personKey != key }
        grants = grants.filter { $0.key.personKey != key }
        tokens = tokens.filter { $0.value.personKey != key }
        codes = codes.filter { $0.value.personKey != key }
    }

    /// Updates a person's name or password (test-user `POST /{id}`).
    func updatePerson(key: String, name: String?, password: String?) -> Bool {
        guard var person = people[key] else { return false }
        if let name {
            person.name = name
            let parts = name.split(separator: " ").map(String.init)
            person.firstName = parts.first
            person.lastName = parts.count > 1 ? parts.last : nil
        }
        if let password {
            person.password = password
            // A new password invalidates the person's sessions everywhere, as on Facebook.
            invalidateTokens(personKey: key, appID: nil, reason: .passwordChanged)
        }
        people[key] = person
        return true
    }

    /// Makes two people friends (test-user `POST /{u1}/friends/{u2}`).
    func befriend(_ first: String, _ second: String) -> Bool {
        guard people[first] != nil, people[second] != nil, first != second else { return false }
        if people[first]?.friends.contains(second) == false { people[first]?.friends.append(second) }
        if people[second]?.friends.contains(first) == false { people[second]?.friends.append(first) }
        return true
    }

    // MARK: Grants

    func grant(appID: String, personKey: String) -> Grant? {
        grants[GrantKey(appID: appID, personKey: personKey)]
    }

    /// Records a dialog's outcome or a minted token's scopes.
    func recordGrant(appID: String, personKey: String, granted: Set<String>, declined: Set<String>) -> Grant {
        let key = GrantKey(appID: appID, personKey: personKey)
        var grant = grants[key] ?? Grant(granted: [], installedAt: now())
        grant.merge(granted: granted, declined: declined)
        grants[key] = grant
        return grant
    }

    /// The dialog's outcome, decided in one step so a concurrent revocation cannot interleave:
    /// without `auth_type=rerequest`, permissions declined before are not asked again; of those
    /// asked, the chosen ones are granted and the rest declined.
    func recordDialogGrant(
        appID: String, personKey: String, requested: Set<String>, chosen: Set<String>, rerequest: Bool
    ) -> Grant {
        let existing = grant(appID: appID, personKey: personKey)
        var asked = requested
        if !rerequest, let existing { asked.subtract(existing.declined) }
        asked.subtract(existing?.granted ?? [])
        let granted = asked.intersection(chosen).union(["public_profile"])
        return recordGrant(appID: appID, personKey: personKey, granted: granted, declined: asked.subtracting(granted))
    }

    /// Sets a grant to exactly these permissions (control API `replace`).
    func replaceGrant(appID: String, personKey: String, granted: Set<String>, declined: Set<String>) -> Grant {
        let grant = Grant(granted: granted, declined: declined, installedAt: now())
        grants[GrantKey(appID: appID, personKey: personKey)] = grant
        return grant
    }

    /// `DELETE /me/permissions`: removes the app for the person, invalidating their tokens (458).
    /// - Parameter sendsSubcode: whether those tokens' errors carry the subcode (`nil`: as minted).
    /// - Returns: whether the person had the app (a grant), and how many live tokens died.
    @discardableResult
    func removeApp(appID: String, personKey: String, sendsSubcode: Bool? = nil) -> AppRemoval {
        let key = GrantKey(appID: appID, personKey: personKey)
        let grant = grants[key]
        grants[key] = nil
        let revoked = invalidateTokens(
            personKey: personKey, appID: appID, reason: .appRemoved, sendsSubcode: sendsSubcode,
            grantedAtRemoval: grant?.granted ?? [])
        return AppRemoval(hadApp: grant != nil, tokensRevoked: revoked)
    }

    /// `DELETE /me/permissions/{permission}`: the permission becomes declined.
    func revokePermission(_ permission: String, appID: String, personKey: String) -> Bool {
        let key = GrantKey(appID: appID, personKey: personKey)
        guard var grant = grants[key], grant.granted.contains(permission) else { return false }
        if permission == "public_profile" {
            removeApp(appID: appID, personKey: personKey)
            return true
        }
        grant.granted.remove(permission)
        grant.declined.insert(permission)
        grants[key] = grant
        return true
    }
}
