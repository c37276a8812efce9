import Crypto
import Foundation

/// The developer team's Sign in with Apple setup, as Apple's developer portal holds it: the team,
/// its Sign in with Apple key (which checks the client secrets a backend sends), the bundle ids and
/// Services ids registered for the team, and the server-to-server notification endpoint.
///
/// Only the public half of the key is here, as only Apple's side is emulated: the backend under
/// test keeps the private key and signs its own client secrets with it.
public struct AppleRegistration: Sendable {
    /// The 10-character Team ID, the `iss` of client secrets.
    public var teamID: String
    /// The 10-character Key ID of the team's Sign in with Apple key, the `kid` of client secrets.
    public var keyID: String
    /// The public half of the team's Sign in with Apple key (P-256), which verifies client secrets.
    public var publicKey: P256.Signing.PublicKey
    /// Bundle ids (native apps) and Services ids (web, Android) registered for the team: the
    /// accepted `client_id`s and the `aud` of their id tokens.
    public var clientIDs: [String]
    /// Where server-to-server notifications go unless a control call names another URL.
    public var notificationURL: String?

    /// The demo team id (`LKDEVTEAM1`).
    public static let demoTeamID = "LKDEVTEAM1"
    /// The demo key id (`LKDEVKEY01`).
    public static let demoKeyID = "LKDEVKEY01"
    /// The demo client ids: a bundle id and a Services id, so grouping across both can be tested.
    public static let demoClientIDs = ["com.example.latchkey", "com.example.latchkey.web"]

    /// Creates a registration.
    public init(
        teamID: String, keyID: String, publicKey: P256.Signing.PublicKey, clientIDs: [String],
        notificationURL: String? = nil
    ) {
        self.teamID = teamID
        self.keyID = keyID
        self.publicKey = publicKey
        self.clientIDs = clientIDs
        self.notificationURL = notificationURL
    }

    /// Refuses a registration Apple's portal would not hold, with a message naming the setting.
    public func validate() throws {
        for (name, value) in [("team id", teamID), ("key id", keyID)] where !Self.isPortalIdentifier(value) {
            throw EmulatorConfigurationError("Apple \(name) '\(value)' must be 10 characters of A-Z and 0-9")
        }
        guard !clientIDs.isEmpty, clientIDs.allSatisfy({ !$0.isEmpty }) else {
            throw EmulatorConfigurationError("Apple client ids must be a non-empty list of non-empty ids")
        }
        if let notificationURL, !WebURL.isValid(notificationURL) {
            throw EmulatorConfigurationError(
                "Apple notification URL '\(notificationURL)' must be an absolute http(s) URL")
        }
    }

    /// Team and key ids are ten uppercase letters or digits in Apple's developer portal.
    private static func isPortalIdentifier(_ value: String) -> Bool {
        value.utf8.count == 10
            && value.utf8.allSatisfy {
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            }
    }
}
