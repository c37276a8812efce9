import Foundation
import HTTPTypes
import LatchkeyAPI

/// The signed-in person's own account: reading it, and the properties an app may change.
struct UserService: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore

    /// The user of the session `claims` name, checking in the same read that the session is
    /// active and the user not disabled (one store operation: the hottest read path).
    func current(_ claims: SessionTokens.AccessClaims) async throws -> StoredUser {
        guard let user = try await store.activeUser(id: claims.userID, sessionID: claims.sessionID) else {
            throw APIError.sessionEnded
        }
        return user
    }

    /// Applies `update` to the user of `claims`: only properties the configuration lets users
    /// write (`LATCHKEY_USER_WRITABLE_PROPERTIES`), each value at most 4 KiB encoded.
    func update(_ claims: SessionTokens.AccessClaims, _ update: UserPropertiesUpdate) async throws -> StoredUser {
        for name in update.properties.keys where !configuration.users.writableProperties.contains(name) {
            throw APIError(.forbidden, .propertyNotWritable, "Users may not change property '\(name)'.")
        }
        guard update.properties.values.allSatisfy({ $0.encoded().count <= 4096 }) else {
            throw APIError.invalidRequest("A property value is too large.")
        }
        guard
            let user = try await store.updateProperties(
                userID: claims.userID, properties: update.properties, now: configuration.clock())
        else { throw APIError.unauthorized }
        return user
    }
}
