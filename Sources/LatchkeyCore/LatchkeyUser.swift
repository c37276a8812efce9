import Foundation
import LatchkeyAPI

/// A signed-in user as the server describes it.
public struct LatchkeyUser: Sendable, Equatable, Codable {
    /// Stable user id.
    public let id: String
    /// Mapped Facebook fields and app-set values.
    public let properties: [String: JSONValue]
    /// Linked identities (Facebook app-scoped ids; none for a guest).
    public let identities: [IdentityBody]
    /// Creation time.
    public let createdAt: Date
    /// A guest (``LatchkeyClient/signInAnonymously()``) that no identity was linked to yet.
    public let isAnonymous: Bool

    /// Creates a user (the client makes these from the server's answers; public so apps can test
    /// code that receives one).
    public init(
        id: String, properties: [String: JSONValue] = [:], identities: [IdentityBody] = [], createdAt: Date = Date(),
        isAnonymous: Bool = false
    ) {
        self.id = id
        self.properties = properties
        self.identities = identities
        self.createdAt = createdAt
        self.isAnonymous = isAnonymous
    }

    init(_ body: UserBody) {
        id = body.id
        properties = body.properties
        identities = body.identities
        createdAt = Date(timeIntervalSince1970: TimeInterval(body.createdAt))
        isAnonymous = body.isAnonymous
    }

    enum CodingKeys: String, CodingKey {
        case id, properties, identities, createdAt, isAnonymous
    }

    /// Reads a stored user; `isAnonymous` is optional, so sessions saved by an SDK older than
    /// guests still load.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        properties = try container.decode([String: JSONValue].self, forKey: .properties)
        identities = try container.decode([IdentityBody].self, forKey: .identities)
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        isAnonymous = try container.decodeIfPresent(Bool.self, forKey: .isAnonymous) ?? false
    }

    /// A string property, e.g. `user.string("email")`.
    public func string(_ name: String) -> String? { properties[name]?.stringValue }
}

/// The outcome of a sign-in (Firebase's `AuthDataResult` with `additionalUserInfo`).
public struct SignInResult: Sendable, Equatable {
    /// The user.
    public let user: LatchkeyUser
    /// Whether this sign-in created the user.
    public let isNewUser: Bool
    /// Permissions granted on Facebook.
    public let grantedPermissions: [String]
    /// Permissions declined on Facebook.
    public let declinedPermissions: [String]
    /// When a recovery code finished the sign-in (``MultiFactorResolver/resolve(recoveryCode:)``):
    /// how many unused codes the person has left. `nil` otherwise.
    public let recoveryCodesLeft: Int?

    /// Creates a result (the client makes these; public so apps can test code that receives one).
    public init(
        user: LatchkeyUser, isNewUser: Bool, grantedPermissions: [String] = [], declinedPermissions: [String] = [],
        recoveryCodesLeft: Int? = nil
    ) {
        self.recoveryCodesLeft = recoveryCodesLeft
        self.user = user
        self.isNewUser = isNewUser
        self.grantedPermissions = grantedPermissions
        self.declinedPermissions = declinedPermissions
    }
}
