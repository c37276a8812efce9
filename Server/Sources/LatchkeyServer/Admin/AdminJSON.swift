import Foundation
import LatchkeyAPI

/// The admin API's answers (docs/admin-openapi.json): camelCase members, times as Unix seconds,
/// never a secret (no factor secret, no key hash, no token).
enum AdminJSON {
    static func time(_ date: Date?) -> JSONValue { date.map { .int(Int($0.timeIntervalSince1970)) } ?? .null }

    static func user(_ user: StoredUser) -> JSONValue {
        [
            "id": .string(user.id), "createdAt": time(user.createdAt), "updatedAt": time(user.updatedAt),
            "disabled": .bool(user.disabled), "isAnonymous": .bool(user.anonymous),
            "properties": .object(user.properties), "identities": .array(user.identities.map(identity)),
        ]
    }

    static func identity(_ identity: StoredIdentity) -> JSONValue {
        [
            "provider": .string(identity.provider), "subject": .string(identity.subject),
            "appId": .string(identity.appID),
            "grantedPermissions": .array(identity.grantedPermissions.map(JSONValue.string)),
            "firstSignInAt": time(identity.firstSeen), "lastSignInAt": time(identity.lastSeen),
        ]
    }

    static func page(_ page: AdminService.UserPage) -> JSONValue {
        ["users": .array(page.users.map(user)), "nextCursor": page.nextCursor.map(JSONValue.string) ?? .null]
    }

    static func view(_ view: AdminService.UserView) -> JSONValue {
        [
            "user": user(view.user), "factors": .array(view.factors.map(factor)),
            "recoveryCodesLeft": .int(view.recoveryCodesLeft), "sessions": .array(view.sessions.map(session)),
            "events": .array(view.events.map(event)),
        ]
    }

    static func factor(_ factor: StoredFactor) -> JSONValue {
        [
            "id": .string(factor.id), "type": .string(factor.type.rawValue),
            "displayName": factor.displayName.map(JSONValue.string) ?? .null, "active": .bool(factor.active),
            "createdAt": time(factor.createdAt), "activatedAt": time(factor.activatedAt),
            "lastUsedAt": time(factor.lastUsedAt),
        ]
    }

    static func session(_ session: StoredSession) -> JSONValue {
        [
            "id": .string(session.id), "createdAt": time(session.createdAt),
            "lastRefreshedAt": time(session.refreshedAt), "expiresAt": time(session.expiresAt),
            "method": session.method.map { .string($0.rawValue) } ?? .null,
            "provider": session.provider.map(JSONValue.string) ?? .null,
            "subject": session.subject.map(JSONValue.string) ?? .null, "client": client(session.client),
        ]
    }

    static func client(_ client: ClientInfo) -> JSONValue {
        [
            "address": client.address.map(JSONValue.string) ?? .null,
            "userAgent": client.userAgent.map(JSONValue.string) ?? .null,
        ]
    }

    static func event(_ recorded: RecordedAuditEvent) -> JSONValue {
        [
            "id": .int(Int(recorded.id)), "type": .string(recorded.event.type.rawValue), "at": time(recorded.at),
            "detail": recorded.event.detail, "node": recorded.context.node.map(JSONValue.string) ?? .null,
            "client": client(recorded.context.client),
        ]
    }

    static func deletion(_ request: StoredDeletionRequest) -> JSONValue {
        [
            "id": .string(request.id), "status": .string(request.status.rawValue),
            "provider": .string(request.provider), "subject": .string(request.subject),
            "appId": .string(request.appID), "userId": request.userID.map(JSONValue.string) ?? .null,
            "policy": .string(request.policy.rawValue), "reason": request.reason.map(JSONValue.string) ?? .null,
            "heldData": request.heldData.map(JSONValue.bool) ?? .null, "createdAt": time(request.createdAt),
            "updatedAt": time(request.updatedAt),
        ]
    }

    static func signingKey(_ key: StoredSigningKey, role: SigningKeyRole?) -> JSONValue {
        [
            "kid": .string(key.kid), "role": role.map { .string($0.rawValue) } ?? .null,
            "createdAt": time(key.createdAt),
            "retiredAt": time(role.map { $0.shownRetirement(key.retiredAt) } ?? key.retiredAt),
        ]
    }

    static func adminKey(_ key: StoredAdminKey) -> JSONValue {
        [
            "id": .string(key.id), "name": .string(key.name), "createdAt": time(key.createdAt),
            "lastUsedAt": time(key.lastUsedAt), "revokedAt": time(key.revokedAt),
        ]
    }
}
