import LatchkeyAPI

/// The one error the SDK throws: a stable `code`, a category that says what to do, and whether to
/// tell the user. A struct rather than an enum, so new codes never break an app's `switch`.
public struct LatchkeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What an app should do about an error, in the spirit of Facebook's `FBErrorUtility`.
    public struct Category: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        /// The person cancelled the login.
        public static let userCancelled = Category(name: "userCancelled")
        /// The session is gone: sign in again.
        public static let reopenSession = Category(name: "reopenSession")
        /// A permission is missing or a property may not be written.
        public static let permissions = Category(name: "permissions")
        /// Temporary: retry later.
        public static let transient = Category(name: "transient")
        /// Someone is rate-limiting: back off.
        public static let throttling = Category(name: "throttling")
        /// The server failed.
        public static let server = Category(name: "server")
        /// Anything else (usually a bug in the request).
        public static let other = Category(name: "other")
        /// The category's name.
        public var description: String { name }
    }

    /// The server's stable code (`facebook_token_expired`, …) or one of the SDK's own
    /// (`network_unavailable`, `invalid_response`, `not_signed_in`, `invalid_configuration`, `user_cancelled`).
    public let code: String
    /// A message for developers.
    public let message: String
    /// The HTTP status, when the error came from the server.
    public let httpStatus: Int?

    /// Creates an error.
    public init(code: String, message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }

    /// What to do about it.
    public var category: Category {
        switch code {
        case "user_cancelled": return .userCancelled
        case ErrorCode.facebookUnavailable.rawValue, ErrorCode.unavailable.rawValue, "network_unavailable":
            return .transient
        case ErrorCode.facebookRateLimited.rawValue: return .throttling
        // The person must first log in at facebook.com; then the same sign-in works (FBErrorUtility
        // files subcode 459 under "retry", facebook-protocol.md §6.4).
        case ErrorCode.facebookCheckpoint.rawValue: return .transient
        case ErrorCode.propertyNotWritable.rawValue, ErrorCode.facebookPermissionDenied.rawValue: return .permissions
        case ErrorCode.internalError.rawValue, "invalid_response": return .server
        case _ where Self.reopenCodes.contains(code): return .reopenSession
        default: return (httpStatus ?? 0) >= 500 ? .server : .other
        }
    }

    private static let reopenCodes: Set<String> = [
        ErrorCode.unauthorized.rawValue, ErrorCode.sessionRevoked.rawValue, ErrorCode.refreshTokenInvalid.rawValue,
        ErrorCode.refreshTokenReused.rawValue, ErrorCode.userDisabled.rawValue, "not_signed_in",
        ErrorCode.facebookTokenInvalid.rawValue, ErrorCode.facebookTokenExpired.rawValue,
        ErrorCode.facebookPasswordChanged.rawValue, ErrorCode.facebookAppRemoved.rawValue,
        ErrorCode.facebookLoggedOut.rawValue, ErrorCode.idTokenExpired.rawValue,
        ErrorCode.idTokenIssuedAtInvalid.rawValue, ErrorCode.facebookCodeInvalid.rawValue,
        ErrorCode.nonceMismatch.rawValue, ErrorCode.nonceInvalid.rawValue, ErrorCode.idTokenReplayed.rawValue,
    ]

    /// Whether to show the person a message (as FBErrorUtility's `shouldNotifyUser`).
    public var shouldNotifyUser: Bool {
        [.reopenSession, .transient, .throttling, .permissions].contains(category) && code != "not_signed_in"
    }

    /// A message suitable for the person, when `shouldNotifyUser`.
    public var userMessage: String? {
        guard shouldNotifyUser else { return nil }
        switch category {
        case .reopenSession:
            switch code {
            case ErrorCode.facebookPasswordChanged.rawValue:
                return "Your Facebook password changed. Please log in again."
            case ErrorCode.facebookAppRemoved.rawValue:
                return "This app was removed from your Facebook account. Please log in again."
            default: return "Your session has ended. Please log in again."
            }
        case .transient where code == ErrorCode.facebookCheckpoint.rawValue:
            return "Facebook needs you to log in at facebook.com first. Then please try again."
        case .transient, .throttling: return "Something went wrong. Please try again in a moment."
        case .permissions: return "You are not allowed to do that."
        default: return nil
        }
    }

    static func sdk(_ code: String, _ message: String) -> LatchkeyError { LatchkeyError(code: code, message: message) }
    static let notSignedIn = sdk("not_signed_in", "No user is signed in.")
}
