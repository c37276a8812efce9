import Foundation
import LatchkeyAPI
import LatchkeyCrypto
import LatchkeyShared

/// Builds Facebook's login dialog URL for a configuration, and reads the redirect that comes back
/// to `fb{app-id}://authorize` (facebook-protocol.md §2), for apps that drive the dialog themselves.
public struct FacebookLoginRequest: Sendable, Equatable {
    /// The Facebook app id.
    public let appID: String
    /// Where Facebook sends the person back; `fb{appID}://authorize` by default.
    public let redirectURI: String
    /// Permissions, tracking and nonce.
    public let configuration: FacebookLoginConfiguration
    /// CSRF protection: echoed back by Facebook and checked by `parse`.
    public let state: String
    /// PKCE verifier (RFC 7636), kept by the app for the code exchange.
    public let codeVerifier: String

    /// Creates a request with a fresh random state and PKCE verifier.
    public init(appID: String, configuration: FacebookLoginConfiguration, redirectURI: String? = nil) {
        self.appID = appID
        self.redirectURI = redirectURI ?? "fb\(appID)://authorize"
        self.configuration = configuration
        self.state = Nonce(length: 32).raw
        self.codeVerifier = PKCE.makeVerifier()
    }

    /// The S256 challenge for `codeVerifier`.
    public var codeChallenge: String { PKCE.challenge(for: codeVerifier) }

    /// The dialog URL: Limited Login asks for an `id_token`, classic login for a PKCE `code`.
    /// - Parameter dialogURL: Facebook's dialog (or an emulator's).
    public func url(dialogURL: URL = URL(string: "https://www.facebook.com/v21.0/dialog/oauth")!) -> URL {
        let scope = (["openid"] + configuration.permissions.sorted()).joined(separator: ",")
        var pairs: [(String, String)] = [
            ("client_id", appID), ("redirect_uri", redirectURI), ("state", state), ("scope", scope),
            ("nonce", configuration.nonce), ("return_scopes", "true"), ("auth_type", "rerequest"),
        ]
        switch configuration.tracking {
        case .limited: pairs.append(("response_type", "id_token"))
        case .enabled:
            pairs += [("response_type", "code"), ("code_challenge", codeChallenge), ("code_challenge_method", "S256")]
        }
        let separator = dialogURL.absoluteString.contains("?") ? "&" : "?"
        return URL(string: dialogURL.absoluteString + separator + FormEncoding.encode(pairs)) ?? dialogURL
    }

    /// What the redirect carried.
    public struct Redirect: Sendable, Equatable {
        /// Authorization code (classic, PKCE).
        public let code: String?
        /// Limited Login id token.
        public let idToken: String?
        /// Implicit-flow access token.
        public let accessToken: String?
        /// Permissions granted.
        public let grantedPermissions: [String]
        /// Permissions declined.
        public let declinedPermissions: [String]
    }

    /// Reads Facebook's redirect (query or fragment).
    /// - Throws: `user_cancelled` for a cancel, `facebook_login_failed` for Facebook's errors,
    ///   `state_mismatch` when the state is not ours, `invalid_response` when nothing usable came back.
    public func parse(_ redirect: URL) throws(LatchkeyError) -> Redirect {
        guard redirect.absoluteString.hasPrefix(redirectURI) else {
            throw LatchkeyError.sdk(.invalidResponse, "This URL is not the login redirect.")
        }
        var parameters: [String: String] = [:]
        if let query = URLComponents(url: redirect, resolvingAgainstBaseURL: false)?.percentEncodedQuery {
            parameters.merge(FormEncoding.decode(query)) { _, new in new }
        }
        if let fragment = redirect.fragment { parameters.merge(FormEncoding.decode(fragment)) { _, new in new } }
        guard let returned = parameters["state"], ConstantTime.equals(returned, state) else {
            throw LatchkeyError.sdk(.stateMismatch, "The login answer does not belong to this request.")
        }
        if let error = parameters["error"] {
            if error == "access_denied" || parameters["error_code"] == "4201"
                || parameters["error_reason"] == "user_denied"
            {
                throw LatchkeyError.sdk(.userCancelled, "The login was cancelled.")
            }
            throw LatchkeyError.sdk(
                .facebookLoginFailed, parameters["error_description"] ?? parameters["error_message"] ?? error)
        }
        let result = Redirect(
            code: parameters["code"], idToken: parameters["id_token"], accessToken: parameters["access_token"],
            grantedPermissions: Self.list(parameters["granted_scopes"]),
            declinedPermissions: Self.list(parameters["denied_scopes"]))
        guard result.code != nil || result.idToken != nil || result.accessToken != nil else {
            // Facebook's SDK treats an answer with nothing in it as a cancel.
            throw LatchkeyError.sdk(.userCancelled, "The login was cancelled.")
        }
        return result
    }

    private static func list(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map(String.init).filter { !$0.isEmpty }
    }
}
