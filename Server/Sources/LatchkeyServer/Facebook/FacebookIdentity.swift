import Foundation
import HTTPTypes
import LatchkeyAPI
import NIOCore

/// What either verifier proves about the person: one normalized shape for classic and Limited Login.
struct FacebookIdentity: Sendable {
    enum TokenKind: String, Sendable {
        case classic
        case limitedLogin = "limited_login"
    }

    /// The Facebook app the credential was issued to.
    let appID: String
    /// The app-scoped user id.
    let subject: String
    /// Profile fields under Graph's field names (`first_name`, `picture`, …), already flattened
    /// where Graph nests (`picture` is the URL).
    let profile: [String: JSONValue]
    let granted: [String]
    let declined: [String]
    let kind: TokenKind
    /// What must be spent, once, when the login is recorded (Limited Login only).
    var singleUse: SingleUseClaims? = nil

    /// The key the per-identity abuse limit counts under: the same person through any sign-in path.
    var limitKey: String { appID + "/" + subject }

    /// The identity as stored: provider `facebook`, first and last seen `now`.
    func stored(at now: Date) -> StoredIdentity {
        StoredIdentity(
            provider: "facebook", subject: subject, appID: appID, grantedPermissions: granted, firstSeen: now,
            lastSeen: now)
    }
}
