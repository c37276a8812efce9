import HTTPTypes
import LatchkeyAPI

/// Every path the emulator serves outside the control API, with the template name used for call
/// counts and fault targeting (`/_emulator/calls`, `/_emulator/faults`).
enum Endpoint: Sendable, Equatable {
    case dialog(submit: Bool)
    case accessToken
    case debugToken
    case app
    case discovery
    case jwks
    case certificates
    case publicKeys
    case profilePicture
    case user(id: String)
    case updateTestUser(id: String)
    case deleteUser(id: String)
    case permissions(id: String)
    case revokePermissions(id: String, permission: String?)
    case testUsers(appID: String, create: Bool)
    case friendship(first: String, second: String)
    case pictureEdge(id: String)
    case appleKeys
    case appleToken
    case appleRevoke

    /// The template name, e.g. `/me` or `/{id}/permissions`.
    var name: String {
        switch self {
        case .dialog: "/dialog/oauth"
        case .accessToken: "/oauth/access_token"
        case .debugToken: "/debug_token"
        case .app: "/app"
        case .discovery: "/.well-known/openid-configuration"
        case .jwks: "/.well-known/oauth/openid/jwks"
        case .certificates: "/.well-known/oauth/openid/certs"
        case .publicKeys: "/.well-known/oauth/openid/keys"
        case .profilePicture: "/platform/profilepic"
        case .user(let id), .updateTestUser(let id), .deleteUser(let id): id == "me" ? "/me" : "/{id}"
        case .permissions(let id), .revokePermissions(let id, _): id == "me" ? "/me/permissions" : "/{id}/permissions"
        case .testUsers: "/{app-id}/accounts/test-users"
        case .friendship: "/{id}/friends/{id}"
        case .pictureEdge(let id): id == "me" ? "/me/picture" : "/{id}/picture"
        case .appleKeys: "/auth/keys"
        case .appleToken: "/auth/token"
        case .appleRevoke: "/auth/revoke"
        }
    }

    /// Whether the path is Apple's (Sign in with Apple's REST API), answered in Apple's error
    /// shape and without Facebook's headers.
    var isApple: Bool {
        switch self {
        case .appleKeys, .appleToken, .appleRevoke: true
        default: false
        }
    }

    /// Whether the path is a Graph API call, charged to an app's platform rate limit and answered
    /// with `X-App-Usage`; the dialog, the key documents and the picture CDN are not.
    var isGraphCall: Bool {
        switch self {
        case .dialog, .discovery, .jwks, .certificates, .publicKeys, .profilePicture, .appleKeys, .appleToken,
            .appleRevoke:
            false
        default: true
        }
    }

    /// Every template name, for documentation and validation of fault targets.
    static let allNames: Set<String> = [
        "/dialog/oauth", "/oauth/access_token", "/debug_token", "/app", "/.well-known/openid-configuration",
        "/.well-known/oauth/openid/jwks", "/.well-known/oauth/openid/certs", "/.well-known/oauth/openid/keys",
        "/platform/profilepic", "/me", "/{id}", "/me/permissions", "/{id}/permissions",
        "/{app-id}/accounts/test-users", "/{id}/friends/{id}", "/me/picture", "/{id}/picture", "/auth/keys",
        "/auth/token", "/auth/revoke",
    ]

    /// Apple's paths, matched only when the emulator has an Apple registration; without one they
    /// are unknown paths like any other.
    static func matchApple(method: HTTPRequest.Method, segments: [String]) -> Endpoint? {
        switch (method, segments) {
        case (.get, ["auth", "keys"]): .appleKeys
        case (.post, ["auth", "token"]): .appleToken
        case (.post, ["auth", "revoke"]): .appleRevoke
        default: nil
        }
    }

    static func match(method: HTTPRequest.Method, segments: [String]) -> Endpoint? {
        switch (method, segments) {
        case (.get, ["dialog", "oauth"]): return .dialog(submit: false)
        case (.post, ["dialog", "oauth"]): return .dialog(submit: true)
        case (.get, ["oauth", "access_token"]), (.post, ["oauth", "access_token"]): return .accessToken
        case (.get, ["debug_token"]): return .debugToken
        case (.get, ["app"]): return .app
        case (.get, [".well-known", "openid-configuration"]): return .discovery
        case (.get, [".well-known", "oauth", "openid", "jwks"]): return .jwks
        case (.get, [".well-known", "oauth", "openid", "certs"]): return .certificates
        case (.get, [".well-known", "oauth", "openid", "keys"]): return .publicKeys
        case (.get, ["platform", "profilepic"]): return .profilePicture
        default: break
        }
        switch (method, segments.count) {
        case (.get, 1): return .user(id: segments[0])
        case (.post, 1): return .updateTestUser(id: segments[0])
        case (.delete, 1): return .deleteUser(id: segments[0])
        case (.get, 2) where segments[1] == "permissions": return .permissions(id: segments[0])
        case (.get, 2) where segments[1] == "picture": return .pictureEdge(id: segments[0])
        case (.delete, 2) where segments[1] == "permissions":
            return .revokePermissions(id: segments[0], permission: nil)
        case (.delete, 3) where segments[1] == "permissions":
            return .revokePermissions(id: segments[0], permission: segments[2])
        case (.get, 3) where segments[1] == "accounts" && segments[2] == "test-users":
            return .testUsers(appID: segments[0], create: false)
        case (.get, 2) where segments[1] == "accounts":
            return .testUsers(appID: segments[0], create: false)
        case (.post, 3) where segments[1] == "accounts" && segments[2] == "test-users":
            return .testUsers(appID: segments[0], create: true)
        case (.post, 3) where segments[1] == "friends":
            return .friendship(first: segments[0], second: segments[2])
        default: return nil
        }
    }
}
