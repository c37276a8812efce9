import Foundation
import LatchkeyCrypto

/// What a Facebook login gave back: the Facebook SDK's `LoginManagerLoginResult` with the tokens it
/// set (`AccessToken.current`, `AuthenticationToken.current`), in types of this SDK so that the
/// Facebook SDK never becomes a dependency.
public struct FacebookLoginResult: Sendable, Equatable {
    /// The classic access token (`AccessToken.current?.tokenString`), if Facebook gave one.
    public var accessToken: String?
    /// The OIDC id token (`AuthenticationToken.current?.tokenString`), if Facebook gave one.
    public var authenticationToken: String?
    /// Permissions the person granted (`grantedPermissions`).
    public var grantedPermissions: Set<String>
    /// Permissions the person declined (`declinedPermissions`).
    public var declinedPermissions: Set<String>
    /// Whether the person cancelled (`isCancelled`).
    public var isCancelled: Bool

    /// Creates a result (an app's ``FacebookLoginProvider`` makes these from the Facebook SDK's).
    public init(
        accessToken: String? = nil, authenticationToken: String? = nil, grantedPermissions: Set<String> = [],
        declinedPermissions: Set<String> = [], isCancelled: Bool = false
    ) {
        self.accessToken = accessToken
        self.authenticationToken = authenticationToken
        self.grantedPermissions = grantedPermissions
        self.declinedPermissions = declinedPermissions
        self.isCancelled = isCancelled
    }

    /// A cancelled login.
    public static let cancelled = FacebookLoginResult(isCancelled: true)
}

/// The app's Facebook login manager, the one piece of the Facebook SDK the sign-in needs. An app
/// conforms its `LoginManager` in a few lines (see Getting Started); tests use a stand-in.
public protocol FacebookLoginProvider: Sendable {
    /// Runs Facebook's login with `configuration` (its permissions, tracking mode and nonce, as the
    /// Facebook SDK's `LoginConfiguration`) and returns what it gave back; a cancel is a result
    /// with `isCancelled`, not an error.
    func logIn(configuration: FacebookLoginConfiguration) async throws -> FacebookLoginResult
}

/// The person's App Tracking Transparency answer (`ATTrackingManager.trackingAuthorizationStatus`),
/// which decides between classic login and Limited Login.
public enum TrackingAuthorization: Sendable, Equatable {
    /// Tracking allowed: classic login, whose access token works with Graph.
    case authorized
    /// Tracking refused: Limited Login.
    case denied
    /// Tracking restricted by the device's settings: Limited Login.
    case restricted
    /// Not asked yet: Limited Login (ask first if the app wants classic login).
    case notDetermined

    /// Classic login only when tracking is authorized, as Facebook's iOS SDK requires.
    public var facebookTracking: FacebookLoginConfiguration.Tracking { self == .authorized ? .enabled : .limited }
}

extension LatchkeyClient {
    /// Signs in through the app's Facebook login manager: asks Facebook for classic login when
    /// tracking is authorized and for Limited Login otherwise (with a fresh nonce, its SHA-256 to
    /// Facebook and the raw value to the server), then hands the credential to Latchkey.
    ///
    /// The access token is used only when tracking is authorized and it is a Graph token. When
    /// tracking is denied, Facebook's iOS SDK may still hand back an "access token" from its Limited
    /// Login shim that Graph refuses ("Cannot parse access token", facebook-ios-sdk issue 2365); the
    /// id token is used then.
    /// - Parameters:
    ///   - provider: the app's Facebook login manager.
    ///   - permissions: Facebook permissions beyond `public_profile`.
    ///   - tracking: the person's App Tracking Transparency status.
    ///   - fieldsMapping: Facebook field → user property; the server's default when `nil`.
    /// - Returns: the sign-in, with the permissions the person declined on Facebook's dialog.
    /// - Throws: `user_cancelled` when the person cancelled; `facebook_login_failed` when Facebook
    ///   gave no usable token or the login manager failed; `invalid_configuration` for a permission
    ///   Facebook's SDK would refuse; otherwise what `signIn(with:)` throws.
    @discardableResult
    public func signInWithFacebook(
        using provider: some FacebookLoginProvider, permissions: Set<String> = [], tracking: TrackingAuthorization,
        fieldsMapping: [String: String]? = nil
    ) async throws(LatchkeyError) -> SignInResult {
        let nonce = Nonce()
        guard
            let configuration = FacebookLoginConfiguration(
                permissions: permissions, tracking: tracking.facebookTracking, nonce: nonce.sha256)
        else {
            throw LatchkeyError.sdk(.invalidConfiguration, "A permission is not one Facebook's SDK accepts.")
        }
        let result: FacebookLoginResult
        do {
            result = try await provider.logIn(configuration: configuration)
        } catch {
            throw LatchkeyError.wrapping(error, as: .facebookLoginFailed, "Facebook's login failed.")
        }
        if result.isCancelled { throw LatchkeyError.sdk(.userCancelled, "The login was cancelled.") }
        let credential: FacebookCredential
        if configuration.tracking == .enabled, let token = result.accessToken, Self.isGraphToken(token) {
            credential = .accessToken(token)
        } else if let idToken = result.authenticationToken, !idToken.isEmpty {
            credential = .limitedLogin(idToken: idToken, rawNonce: nonce.raw)
        } else {
            throw LatchkeyError.sdk(.facebookLoginFailed, "Facebook's login gave back no token Latchkey can use.")
        }
        let signedIn = try await signIn(with: credential, fieldsMapping: fieldsMapping)
        // Limited Login's id token carries no declined permissions; the dialog's answer does.
        let declined = Set(signedIn.declinedPermissions).union(result.declinedPermissions).sorted()
        return SignInResult(
            user: signedIn.user, isNewUser: signedIn.isNewUser, grantedPermissions: signedIn.grantedPermissions,
            declinedPermissions: declined)
    }

    /// Whether `token` can be a Graph user access token: opaque, not empty, not a JWT (the Limited
    /// Login shim's tokens and id tokens are JWTs, which Graph refuses).
    static func isGraphToken(_ token: String) -> Bool { !token.isEmpty && !CompactJWS.looksLikeJWT(token) }
}
