import Foundation
import LatchkeyAPI

/// Answers written with `JSONValue`'s direct writer instead of `JSONEncoder`, which was 8 % of a
/// login's CPU (docs/performance.md). The keys are the `Codable` ones; the SDK decodes these
/// bodies with `JSONDecoder`, and its end-to-end tests would catch a difference.
protocol JSONRepresentable {
    var json: JSONValue { get }
}

extension SessionBody: JSONRepresentable {
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "access_token": .string(accessToken), "token_type": .string(tokenType), "expires_in": .int(expiresIn),
            "refresh_token": .string(refreshToken), "refresh_token_expires_in": .int(refreshTokenExpiresIn),
        ]
        if let scope { members["scope"] = .string(scope) }
        return .object(members)
    }
}

extension IdentityBody: JSONRepresentable {
    var json: JSONValue {
        [
            "provider": .string(provider), "subject": .string(subject), "appId": .string(appID),
            "grantedPermissions": .array(grantedPermissions.map(JSONValue.string)),
            "firstSignInAt": .int(firstSignInAt), "lastSignInAt": .int(lastSignInAt),
        ]
    }
}

extension UserBody: JSONRepresentable {
    var json: JSONValue {
        [
            "id": .string(id), "properties": .object(properties), "identities": .array(identities.map(\.json)),
            "createdAt": .int(createdAt), "isAnonymous": .bool(isAnonymous),
        ]
    }
}

extension SignInBody: JSONRepresentable {
    var json: JSONValue {
        var body: [String: JSONValue] = [
            "user": user.json, "isNewUser": .bool(isNewUser),
            "grantedPermissions": .array(grantedPermissions.map(JSONValue.string)),
            "declinedPermissions": .array(declinedPermissions.map(JSONValue.string)), "session": session.json,
        ]
        // Only after a recovery code: absent, not null, otherwise.
        if let recoveryCodesLeft { body["recoveryCodesLeft"] = .int(recoveryCodesLeft) }
        return .object(body)
    }
}

extension ClientBody: JSONRepresentable {
    var json: JSONValue {
        ["network": network.map(JSONValue.string) ?? .null, "agent": agent.map(JSONValue.string) ?? .null]
    }
}

extension ActiveSessionBody: JSONRepresentable {
    var json: JSONValue {
        [
            "id": .string(id), "createdAt": .int(createdAt),
            "lastRefreshedAt": lastRefreshedAt.map(JSONValue.int) ?? .null,
            "expiresAt": .int(expiresAt), "method": method.map(JSONValue.string) ?? .null,
            "provider": provider.map(JSONValue.string) ?? .null, "client": client.json, "current": .bool(current),
        ]
    }
}

extension ActiveSessionsBody: JSONRepresentable {
    var json: JSONValue { ["sessions": .array(sessions.map(\.json))] }
}

extension SecurityEventBody: JSONRepresentable {
    var json: JSONValue {
        [
            "id": .string(id), "type": .string(type), "at": .int(at),
            "provider": provider.map(JSONValue.string) ?? .null, "client": client.json, "details": .object(details),
        ]
    }
}

extension SecurityEventsBody: JSONRepresentable {
    var json: JSONValue {
        ["events": .array(events.map(\.json)), "nextCursor": nextCursor.map(JSONValue.string) ?? .null]
    }
}
