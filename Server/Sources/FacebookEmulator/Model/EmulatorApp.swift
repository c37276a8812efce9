import Foundation
import LatchkeyAPI

/// A Facebook app registered with the emulator.
public struct EmulatorApp: Sendable, Codable, Equatable {
    /// The numeric app id, as a string (Facebook's ids overflow 32 bits).
    public var id: String
    /// The app secret: signs `signed_request`s, keys `appsecret_proof`, and forms `APPID|SECRET`.
    public var secret: String
    /// The display name shown in the dialog and `debug_token`'s `application`.
    public var name: String
    /// Redirect URIs the dialog accepts, matched exactly. `fb{id}…://authorize` and Facebook's
    /// `https://www.facebook.com/connect/login_success.html` are always accepted, as on Facebook.
    public var redirectURIs: [String]
    /// "Require App Secret": Graph calls with user tokens must carry a valid `appsecret_proof`.
    public var requireAppSecretProof: Bool
    /// Permissions granted when a token is minted through the control API without explicit scopes.
    public var defaultPermissions: [String]
    /// Daily active users, which size the app's hourly Graph budget (200 calls each, Facebook's
    /// platform rate limit). The default, 10,000, keeps tests and load runs far from throttling;
    /// lower it (seed `daily_active_users`, or `POST /_emulator/usage`) to reach code 4.
    public var dailyActiveUsers: Int
    /// The Business Manager the app belongs to, if any (seed `business`): apps of one business
    /// see the same `token_for_business` for a person, whose app-scoped ids differ per app; an app
    /// of no business gets an error for that field, as Facebook documents
    /// (developers.facebook.com/docs/apps/for-business).
    public var business: String?
    /// The "Deauthorize callback URL" of Facebook Login's settings: where the emulator posts a
    /// signed request when a person removes the app (`POST /_emulator/scenarios/remove-app`).
    public var deauthorizeCallbackURL: String?
    /// The "Data deletion request URL" of the app's settings: where the emulator posts a signed
    /// request when a person asks for their data to be deleted
    /// (`POST /_emulator/scenarios/request-deletion`).
    public var dataDeletionCallbackURL: String?

    /// Creates an app.
    /// - Parameters:
    ///   - id: numeric app id.
    ///   - secret: app secret.
    ///   - name: display name.
    ///   - redirectURIs: exact redirect URIs accepted by the dialog.
    ///   - requireAppSecretProof: whether user-token Graph calls need `appsecret_proof`.
    ///   - defaultPermissions: what minted tokens get by default.
    ///   - dailyActiveUsers: sizes the hourly Graph budget (200 calls per user).
    ///   - business: the business the app belongs to, or `nil`.
    ///   - deauthorizeCallbackURL: where deauthorize callbacks go, or `nil`.
    ///   - dataDeletionCallbackURL: where data-deletion callbacks go, or `nil`.
    public init(
        id: String, secret: String, name: String, redirectURIs: [String] = [],
        requireAppSecretProof: Bool = false, defaultPermissions: [String] = ["public_profile", "email"],
        dailyActiveUsers: Int = 10_000, business: String? = nil, deauthorizeCallbackURL: String? = nil,
        dataDeletionCallbackURL: String? = nil
    ) {
        self.business = business
        self.deauthorizeCallbackURL = deauthorizeCallbackURL
        self.dataDeletionCallbackURL = dataDeletionCallbackURL
        self.id = id
        self.secret = secret
        self.name = name
        self.redirectURIs = redirectURIs
        self.requireAppSecretProof = requireAppSecretProof
        self.defaultPermissions = defaultPermissions
        self.dailyActiveUsers = dailyActiveUsers
    }

    enum CodingKeys: String, CodingKey {
        case id, secret, name
        case redirectURIs = "redirect_uris"
        case requireAppSecretProof = "require_appsecret_proof"
        case defaultPermissions = "default_permissions"
        case dailyActiveUsers = "daily_active_users"
        case business
        case deauthorizeCallbackURL = "deauthorize_callback_url"
        case dataDeletionCallbackURL = "data_deletion_callback_url"
    }

    /// Decodes a seed entry; everything but `id` and `secret` has a default.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            secret: try container.decode(String.self, forKey: .secret),
            name: try container.decodeIfPresent(String.self, forKey: .name) ?? "App",
            redirectURIs: try container.decodeIfPresent([String].self, forKey: .redirectURIs) ?? [],
            requireAppSecretProof: try container.decodeIfPresent(Bool.self, forKey: .requireAppSecretProof) ?? false,
            defaultPermissions: try container.decodeIfPresent([String].self, forKey: .defaultPermissions)
                ?? ["public_profile", "email"],
            dailyActiveUsers: try container.decodeIfPresent(Int.self, forKey: .dailyActiveUsers) ?? 10_000,
            business: try container.decodeIfPresent(String.self, forKey: .business),
            deauthorizeCallbackURL: try container.decodeIfPresent(String.self, forKey: .deauthorizeCallbackURL),
            dataDeletionCallbackURL: try container.decodeIfPresent(String.self, forKey: .dataDeletionCallbackURL)
        )
    }

    /// The literal app token Facebook accepts wherever an app token is needed.
    var literalAppToken: String { "\(id)|\(secret)" }

    /// Whether the dialog may redirect to `uri` for this app.
    func accepts(redirectURI uri: String) -> Bool {
        if redirectURIs.contains(uri) { return true }
        if uri == "https://www.facebook.com/connect/login_success.html" { return true }
        // The iOS SDK's `fb{APP_ID}{suffix}://authorize`, which Facebook allows for every iOS app;
        // the suffix is lowercase letters only, so `fb1234` never passes for app `123`.
        let scheme = "fb\(id)"
        guard uri.hasPrefix(scheme), let range = uri.range(of: "://") else { return false }
        let suffix = uri[uri.index(uri.startIndex, offsetBy: scheme.count)..<range.lowerBound]
        let rest = uri[range.upperBound...]
        return suffix.allSatisfy { $0.isASCII && $0.isLowercase } && (rest == "authorize" || rest == "authorize/")
    }
}
