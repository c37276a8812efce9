import Foundation
import LatchkeyAPI
import LatchkeyServer
import PostgresNIO

extension PostgresStore {
    /// See `LatchkeyStore.signIn`. One round trip for a first login and for a returning person
    /// whose mapped properties are the ones the last sign-in merged (nearly every sign-in):
    /// `SignInDirect` finds the identity and writes everything in one statement, telling from
    /// the stored stamp (`StorageRules.signInPropertiesStamp`) that the merge would change
    /// nothing, so no read has to come first (the statement returns the user as stored).
    ///
    /// Otherwise (the properties need merging, or a race was lost) it refuses itself, writing
    /// nothing, and the sign-in reads the facts and the identity (`ReadSignIn`), lets
    /// `Verdicts.signIn` decide, merges the properties in Swift (`StorageRules`) and runs
    /// `SignIn`, which checks what the read assumed: the jti and nonce still unspent, the identity
    /// still that user's, who is not disabled, and whose properties are still the ones read. When
    /// a check fails the statement aborts itself naming what it found, so nothing it wrote stays:
    /// the verdict decides again on those facts, and a lost race (two first logins of one person,
    /// a concurrent property update) is read again and written again. Two concurrent first logins
    /// therefore make one user, the second signing in to it, and neither sees an error.
    ///
    /// Neither statement decides a refusal: each reports the facts it found and `Verdicts.signIn`
    /// decides, so the one-statement path and the read-then-write path (the only one when
    /// `fastPaths` is off) answer alike; the storage contract runs on both. The one statement
    /// stays because it pays: repeat Limited Login at 455–499 µs of node CPU and 0.97 round trips
    /// per sign-in, against 538–622 µs and 2.1–2.2 read-then-write (docs/performance.md, "One
    /// statement per sign-in").
    package func signIn(_ login: LoginRecord, now: Date) async throws -> (user: StoredUser, created: Bool) {
        let signedIn = try await record(login, now: now)
        // Committed: the sign-in is recorded, and its challenge stored in place of the session.
        if signedIn.held { throw SecondFactorRequired(userID: signedIn.user.id) }
        return (signedIn.user, signedIn.created)
    }

    /// The sign-in's statements; `held` when the user's second factor held the session back.
    private func record(
        _ login: LoginRecord, now: Date
    ) async throws -> (user: StoredUser, created: Bool, held: Bool) {
        let fastPaths = fastPaths
        return try await withConnection("sign-in") { connection in
            let stamp = StorageRules.signInPropertiesStamp(login)
            // A new identity's business token goes with the read-then-write path (`SignIn` stores
            // it); that path is rare: a first sign-in after the business was looked up.
            if fastPaths, login.businessToken == nil,
                let done = try await Self.signInDirect(login, stamp: stamp, now: now, connection)
            {
                return done
            }
            // Each pass loses only to a write that committed meanwhile; a handful is plenty.
            for _ in 0..<8 {
                let (facts, found) = try await Self.readSignIn(login, now: now, connection)
                if let refusal = Verdicts.signIn(facts) { throw refusal }
                let plan = Self.plan(login, found: found, stamp: stamp, now: now)
                let held: Bool
                do {
                    held = try await connection.rows(plan.statement).first?.1 ?? false
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "LK001" {
                    try Self.refusal(error)  // only "changed": read again
                    continue
                }
                let user = try await Self.signedIn(plan.user, id: plan.userID, created: plan.created, connection)
                return (user.user, user.created, held)
            }
            throw PostgresStoreError(
                operation: "sign-in", sqlState: "LK001", message: "the identity kept changing during the sign-in")
        }
    }

    /// The one-statement sign-in (`Prepared.SignInDirect`): the user signed in to, or `nil` when
    /// the statement refused itself for want of a read (`stale`, `changed`).
    static func signInDirect(
        _ login: LoginRecord, stamp: Data?, now: Date, _ connection: PostgresConnection
    ) async throws -> (user: StoredUser, created: Bool, held: Bool)? {
        let created = StorageRules.signInEvent(login, userID: login.newUserID, created: true)
        let returning = StorageRules.signInEvent(login, userID: login.newUserID, created: false)
        let statement = Prepared.SignInDirect(
            values: values(login, now: now, detail: created.detail), stamp: stamp, newUserID: login.newUserID,
            newUserProperties: json(login.mappedProperties), createdAuditType: created.type.rawValue,
            signedInAuditType: returning.type.rawValue, joinsByBusiness: login.joinsByBusiness)
        let row: Prepared.SignInDirect.Row
        do {
            // Always one row; without it the statement may still have committed, so no fallback
            // (which would spend the jti again).
            guard let first = try await connection.rows(statement).first else {
                throw PostgresStoreError(
                    operation: "sign-in", sqlState: "", message: "the sign-in statement returned no row")
            }
            row = first
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "LK001" {
            try refusal(error)  // "stale" or "changed": read, then write
            return nil
        }
        let stored = PostgresTime.stored(now)
        guard
            case (
                _, let id?, let createdAt?, let updatedAt?, let properties?, let appID?, let firstSeen?, let links?, _
            ) =
                row
        else {
            return (StorageRules.createdUser(login, id: login.newUserID, at: stored), true, row.8)
        }
        let user = StoredUser(
            id: id, createdAt: createdAt, updatedAt: updatedAt, disabled: false, properties: decodeObject(properties),
            identities: [StorageRules.signedInIdentity(login, appID: appID, firstSeen: firstSeen, at: stored)])
        let signedIn = try await signedIn(links == 1 ? user : nil, id: id, created: false, connection)
        return (signedIn.user, signedIn.created, row.8)
    }

    /// Throws the refusal `Verdicts.signIn` decides on the facts a sign-in statement aborted
    /// with (`SignInParts.refuseOn`); returns when they hold none, only this backend's reasons
    /// to read first (`stale`, `changed`).
    static func refusal(_ error: PSQLError) throws {
        let names = (error.serverInfo?[.message] ?? "").split(separator: ",")
        if let refusal = Verdicts.signIn(SignInFacts(names: names)) { throw refusal }
    }

    /// The user after a committed sign-in: `known` when the statement's inputs tell it (one
    /// identity: nearly everyone), otherwise read. Never the sign-in again: that would spend the
    /// jti twice.
    static func signedIn(
        _ known: StoredUser?, id: String, created: Bool, _ connection: PostgresConnection
    ) async throws -> (user: StoredUser, created: Bool) {
        if let known { return (known, created) }
        guard let user = try await loadUser(id, connection) else {
            throw PostgresStoreError(
                operation: "sign-in", sqlState: "", message: "the user vanished right after the sign-in")
        }
        return (user, created)
    }

    /// What the read found: the identity's user as stored, and what the write checks against.
    struct FoundIdentity {
        var user: StoredUser
        var appID: String
        var firstSeen: Date
        var links: Int
        var propertiesText: String
        var stamp: Data?
    }

    /// The sign-in's facts and the identity's user, without a lock: the write statement checks
    /// that nothing changed.
    static func readSignIn(
        _ login: LoginRecord, now: Date, _ connection: PostgresConnection
    ) async throws -> (SignInFacts, FoundIdentity?) {
        let statement = Prepared.ReadSignIn(
            now: now, jti: login.singleUse?.jti, nonce: login.singleUse?.serverNonce,
            provider: login.identity.provider, subject: login.identity.subject)
        guard let row = try await connection.rows(statement).first else {
            throw PostgresStoreError(operation: "sign-in", sqlState: "", message: "the sign-in's read returned no row")
        }
        let (jtiSpent, nonceInvalid, id, created, updated, disabled, properties, appID, firstSeen, links, stamp) = row
        var found: FoundIdentity?
        if let id, let created, let updated, let disabled, let properties, let appID, let firstSeen, let links {
            found = FoundIdentity(
                user: StoredUser(
                    id: id, createdAt: created, updatedAt: updated, disabled: disabled,
                    properties: decodeObject(properties), identities: []),
                appID: appID, firstSeen: firstSeen, links: links, propertiesText: properties, stamp: stamp)
        }
        let facts = SignInFacts(
            jtiSpent: jtiSpent, nonceInvalid: nonceInvalid, userDisabled: found?.user.disabled ?? false,
            newIdentity: found == nil && login.joinsByBusiness)
        return (facts, found)
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

    /// `stamp` is the login's (`StorageRules.signInPropertiesStamp`): stored with a merge and
    /// with a new user, and beside unchanged properties when the stored one differs.
    static func plan(_ login: LoginRecord, found: FoundIdentity?, stamp: Data?, now: Date) -> SignInPlan {
        let stored = PostgresTime.stored(now)
        let userID = found?.user.id ?? login.newUserID
        let created = found == nil
        var properties: String?
        var stampToWrite = stamp
        var user: StoredUser?
        if let found {
            var after = found.user
            if let merged = StorageRules.propertiesAfterSignIn(stored: found.user.properties, login: login) {
                properties = json(merged)
                after.properties = merged
                after.updatedAt = stored
            } else if found.stamp == stamp {
                stampToWrite = nil
            }
            if found.links == 1 {
                after.identities = [
                    StorageRules.signedInIdentity(login, appID: found.appID, firstSeen: found.firstSeen, at: stored)
                ]
                user = after
            }
        } else {
            properties = json(login.mappedProperties)
            user = StorageRules.createdUser(login, id: userID, at: stored)
        }
        let event = StorageRules.signInEvent(login, userID: userID, created: created)
        let statement = Prepared.SignIn(
            values: values(login, now: now, detail: event.detail), found: found != nil, userID: userID,
            properties: properties, propertiesRead: found?.propertiesText, auditType: event.type.rawValue,
            stamp: stampToWrite, businessToken: login.businessToken)
        return SignInPlan(statement: statement, userID: userID, created: created, user: user)
    }

    /// What both sign-in statements bind the same way.
    static func values(_ login: LoginRecord, now: Date, detail: JSONValue) -> Prepared.SignInValues {
        let identity = login.identity
        return Prepared.SignInValues(
            now: now, jti: login.singleUse?.jti, jtiExpiresAt: login.singleUse?.jtiExpiresAt,
            nonce: login.singleUse?.serverNonce, provider: identity.provider, subject: identity.subject,
            appID: identity.appID, granted: json(identity.grantedPermissions),
            session: login.session.map {
                Prepared.SessionValues(
                    id: $0.id, refreshTokenHash: $0.refreshTokenHash, createdAt: $0.createdAt,
                    expiresAt: $0.refreshExpiresAt, method: $0.method.rawValue, clientAddress: $0.client.address,
                    userAgent: $0.client.userAgent)
            },
            code: login.authorizationCode.map {
                Prepared.CodeValues(
                    hash: $0.hash, clientID: $0.clientID, redirectURI: $0.redirectURI, codeChallenge: $0.codeChallenge,
                    sessionID: $0.sessionID, scope: json($0.scope), expiresAt: $0.expiresAt)
            },
            auditDetail: String(decoding: detail.encoded(), as: UTF8.self), audit: AuditContext.current,
            challenge: login.challenge)
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
