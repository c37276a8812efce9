import Foundation
import LatchkeyAPI
import LatchkeyServer
import PostgresNIO

extension PostgresStore {
    /// See `LatchkeyStore.signIn`. Two round trips: one read (the identity, its user, their
    /// properties), the property merge decided in Swift (`StorageRules`), then one statement that
    /// writes everything or nothing.
    ///
    /// The statement checks what the read assumed: the identity still belongs to that user, who
    /// is not disabled, and (when properties change) whose properties are still the ones merged;
    /// a first login's identity is inserted with `ON CONFLICT DO NOTHING`. When a check fails the
    /// statement aborts itself (`latchkey_refuse`), so nothing it wrote stays: a spent `jti` or a
    /// consumed nonce is refused that way, and a lost race (two first logins of one person, a
    /// concurrent property update) is read again and written again. Two concurrent first logins
    /// therefore make one user, the second signing in to it, and neither sees an error.
    public func signIn(_ login: LoginRecord, now: Date) async throws -> (user: StoredUser, created: Bool) {
        try await withConnection("sign-in") { connection in
            // Each pass loses only to a write that committed meanwhile; a handful is plenty.
            for _ in 0..<8 {
                let found = try await Self.readIdentity(login.identity, connection)
                if let found, found.user.disabled {
                    throw SignInConflict.userDisabled
                }
                let plan = Self.plan(login, found: found, now: now)
                do {
                    _ = try await connection.rows(plan.statement)
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "LK001" {
                    switch error.serverInfo?[.message] {
                    case "replayed": throw SignInConflict.replayed
                    case "nonce_invalid": throw SignInConflict.nonceInvalid
                    default: continue  // "changed": read again
                    }
                }
                if let user = plan.user { return (user, plan.created) }
                // Written and committed: running it again would spend the jti twice.
                guard let user = try await Self.loadUser(plan.userID, connection) else {
                    throw PostgresStoreError(
                        operation: "sign-in", sqlState: "", message: "the user vanished right after the sign-in")
                }
                return (user, plan.created)
            }
            throw PostgresStoreError(
                operation: "sign-in", sqlState: "LK001", message: "the identity kept changing during the sign-in")
        }
    }

    /// What the read found: the identity's user as stored, and what the write checks against.
    struct FoundIdentity {
        var user: StoredUser
        var appID: String
        var firstSeen: Date
        var links: Int
        var propertiesText: String
    }

    /// The identity's user, without a lock: the write statement checks that nothing changed.
    static func readIdentity(
        _ identity: StoredIdentity, _ connection: PostgresConnection
    ) async throws
        -> FoundIdentity?
    {
        guard
            let (id, created, updated, disabled, properties, appID, firstSeen, links) = try await connection.rows(
                Prepared.ReadIdentity(provider: identity.provider, subject: identity.subject)
            ).first
        else { return nil }
        return FoundIdentity(
            user: StoredUser(
                id: id, createdAt: created, updatedAt: updated, disabled: disabled,
                properties: decodeObject(properties), identities: []),
            appID: appID, firstSeen: firstSeen, links: links, propertiesText: properties)
    }

    /// The write statement for `login`, and what it returns when it succeeds.
    struct SignInPlan {
        var statement: Prepared.SignIn
        var userID: String
        var created: Bool
        /// The user after the sign-in when known without reading it (one identity: nearly
        /// everyone); otherwise it is read after the write.
        var user: StoredUser?
    }

    static func plan(_ login: LoginRecord, found: FoundIdentity?, now: Date) -> SignInPlan {
        let identity = login.identity
        let stamp = PostgresTime.stored(now)
        let userID = found?.user.id ?? login.newUserID
        let created = found == nil
        var properties: String?
        var propertiesRead: String?
        var user: StoredUser?
        if let found {
            var after = found.user
            if let merged = StorageRules.propertiesAfterSignIn(stored: found.user.properties, login: login) {
                properties = json(merged)
                propertiesRead = found.propertiesText
                after.properties = merged
                after.updatedAt = stamp
            }
            if found.links == 1 {
                after.identities = [
                    StoredIdentity(
                        provider: identity.provider, subject: identity.subject, appID: found.appID,
                        grantedPermissions: identity.grantedPermissions, firstSeen: found.firstSeen, lastSeen: stamp)
                ]
                user = after
            }
        } else {
            properties = json(login.mappedProperties)
            user = StorageRules.createdUser(login, id: userID, at: stamp)
        }
        let event = StorageRules.signInEvent(login, userID: userID, created: created)
        let code = login.authorizationCode
        let statement = Prepared.SignIn(
            now: now, jti: login.singleUse?.jti, jtiExpiresAt: login.singleUse?.jtiExpiresAt,
            nonce: login.singleUse?.serverNonce, found: found != nil, userID: userID, provider: identity.provider,
            subject: identity.subject, appID: identity.appID, granted: json(identity.grantedPermissions),
            properties: properties, propertiesRead: propertiesRead, sessionID: login.session?.id,
            refreshTokenHash: login.session?.refreshTokenHash, sessionCreatedAt: login.session?.createdAt,
            sessionExpiresAt: login.session?.refreshExpiresAt, codeHash: code?.hash, codeClientID: code?.clientID,
            codeRedirectURI: code?.redirectURI, codeChallenge: code?.codeChallenge, codeSessionID: code?.sessionID,
            codeScope: code.map { json($0.scope) }, codeExpiresAt: code?.expiresAt, auditType: event.type.rawValue,
            auditDetail: String(decoding: event.detail.encoded(), as: UTF8.self))
        return SignInPlan(statement: statement, userID: userID, created: created, user: user)
    }

    // MARK: JSON columns

    static func json(_ value: [String: JSONValue]) -> String {
        String(decoding: JSONValue.object(value).encoded(), as: UTF8.self)
    }

    static func json(_ values: [String]) -> String {
        String(decoding: JSONValue.array(values.map(JSONValue.string)).encoded(), as: UTF8.self)
    }

    static func decodeObject(_ text: String?) -> [String: JSONValue] {
        text.flatMap { try? JSONValue.decode(Data($0.utf8)) }?.objectValue ?? [:]
    }

    static func decodeStrings(_ text: String?) -> [String] {
        (text.flatMap { try? JSONValue.decode(Data($0.utf8)) })?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}
