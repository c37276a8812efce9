import Foundation

/// What to ask Facebook for, with the rules Facebook's iOS SDK enforces (facebook-protocol.md §8):
/// the initializer returns `nil` for an empty nonce or one containing spaces or tabs, and for a
/// permission that is empty or not only lowercase letters and `_`.
public struct FacebookLoginConfiguration: Sendable, Equatable {
    /// Classic login (`enabled`) or Limited Login (`limited`).
    public enum Tracking: String, Sendable {
        /// Classic login: an access token usable with Graph.
        case enabled
        /// Limited Login: an OIDC id token only.
        case limited
    }

    /// Permissions Facebook accepts in Limited Login.
    public static let limitedLoginPermissions: Set<String> = [
        "public_profile", "email", "gaming_profile", "gaming_user_picture", "user_age_range", "user_birthday",
        "user_friends", "user_gender", "user_hometown", "user_link", "user_location", "user_messenger_contact",
    ]

    /// Requested permissions.
    public let permissions: Set<String>
    /// Classic or Limited Login.
    public let tracking: Tracking
    /// The nonce for Facebook (use `Nonce.sha256` and keep `Nonce.raw`).
    public let nonce: String

    /// Validates and creates a configuration; `nil` where Facebook's SDK refuses one.
    public init?(permissions: Set<String> = [], tracking: Tracking = .enabled, nonce: String = UUID().uuidString) {
        guard !nonce.isEmpty, !nonce.unicodeScalars.contains(where: { CharacterSet.whitespaces.contains($0) }) else {
            return nil
        }
        guard
            permissions.allSatisfy({ permission in
                !permission.isEmpty && permission.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || $0 == "_" }
            })
        else { return nil }
        self.permissions = permissions
        self.tracking = tracking
        self.nonce = nonce
    }

    /// Permissions Limited Login would not grant (an app asking for them gets nothing for them).
    public var permissionsUnavailableInLimitedLogin: Set<String> {
        tracking == .limited ? permissions.subtracting(Self.limitedLoginPermissions) : []
    }
}

/// The former name, kept for one release. It collides with the Facebook SDK's `LoginConfiguration` in a file
/// that imports both (write `FBSDKLoginKit.LoginConfiguration` for theirs until it goes); use
/// ``FacebookLoginConfiguration``.
@available(*, deprecated, renamed: "FacebookLoginConfiguration")
public typealias LoginConfiguration = FacebookLoginConfiguration
