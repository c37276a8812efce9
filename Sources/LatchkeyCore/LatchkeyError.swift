import Foundation
@_exported import LatchkeyAPI

/// The one error the SDK throws: a stable `code`, a category that says what to do, and whether to
/// tell the user. A struct rather than an enum, so new codes never break an app's `switch`.
///
/// Switch on codes with the named constants, in `catch` patterns too:
///
/// ```swift
/// do {
///     try await client.signIn(with: credential)
/// } catch LatchkeyError.Code.userCancelled {
///     // nothing to show
/// } catch where error.category == .reopenSession {
///     showSignIn()
/// }
/// ```
public struct LatchkeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable snake_case error code: the server's (``ErrorCode``) or one of the SDK's own, all
    /// named on this type (`LatchkeyError.Code.userCancelled`, `.stateMismatch`, …).
    public typealias Code = ErrorCode

    /// What an app should do about an error, in the spirit of Facebook's `FBErrorUtility`.
    public struct Category: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        /// The person cancelled the login.
        public static let userCancelled = Category(name: "userCancelled")
        /// The app cancelled the work (its task was cancelled, or the session it belonged to ended):
        /// nothing to show the person, and nothing to retry.
        public static let cancelled = Category(name: "cancelled")
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
        /// The person has a second factor: ask for a code and pass it to ``LatchkeyError/resolver``.
        public static let secondFactor = Category(name: "secondFactor")
        /// Anything else (usually a bug in the request or the app's configuration).
        public static let other = Category(name: "other")
        /// The category's name.
        public var description: String { name }
    }

    /// The server's stable code (`facebook_token_expired`, …) or one of the SDK's own
    /// (`.userCancelled`, `.networkUnavailable`, …).
    public let code: Code
    /// A message for developers (English, may name the request); ``userMessage`` is the person's.
    public let message: String
    /// The HTTP status, when the error came from the server.
    public let httpStatus: Int?
    /// What went wrong underneath (the transport's error, the credential store's, a decoding
    /// error), for logs; never part of equality.
    public let underlying: (any Error)?
    /// With ``Code/identityAlreadyLinked`` only: the ticket that merges the account owning the
    /// identity with this one. Sign in with the same credential, then pass it to
    /// ``LatchkeyClient/completeLink(ticket:)``. Valid for minutes, once.
    public let linkTicket: String?
    /// With ``Code/secondFactorRequired`` only: what finishes the sign-in (or, for a call that
    /// needs a session that proved a second factor, raises this session) with a code from the
    /// person's authenticator or a recovery code (Firebase's `MultiFactorResolver`, which its
    /// errors carry under `AuthErrorUserInfoMultiFactorResolverKey`).
    public let resolver: MultiFactorResolver?
    /// The challenge of a `second_factor_required` answer, as the server sent it.
    let challenge: SecondFactorChallengeBody?

    /// Creates an error (also for tests of code that handles the SDK's errors).
    public init(
        code: Code, message: String, httpStatus: Int? = nil, underlying: (any Error)? = nil, linkTicket: String? = nil
    ) {
        self.init(
            code: code, message: message, httpStatus: httpStatus, underlying: underlying, linkTicket: linkTicket,
            challenge: nil, resolver: nil)
    }

    /// Creates an error with a second-factor challenge (the transport's) or its resolver.
    init(
        code: Code, message: String, httpStatus: Int?, underlying: (any Error)?, linkTicket: String?,
        challenge: SecondFactorChallengeBody?, resolver: MultiFactorResolver?
    ) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.underlying = underlying
        self.linkTicket = linkTicket
        self.challenge = challenge
        self.resolver = resolver
    }

    /// This error with a resolver for its challenge, when it carries one, resolving through
    /// `client` for `purpose`.
    func resolving(with client: LatchkeyClient, purpose: MultiFactorResolver.Purpose, now: Date) -> LatchkeyError {
        guard code == .secondFactorRequired, let challenge, resolver == nil else { return self }
        return LatchkeyError(
            code: code, message: message, httpStatus: httpStatus, underlying: underlying, linkTicket: linkTicket,
            challenge: challenge,
            resolver: MultiFactorResolver(challenge, purpose: purpose, client: client, now: now))
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }

    /// Code, message and status; the underlying error is left out (errors are rarely equatable).
    public static func == (lhs: LatchkeyError, rhs: LatchkeyError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.httpStatus == rhs.httpStatus
    }

    /// What to do about it.
    public var category: Category {
        switch code {
        case .userCancelled: return .userCancelled
        case .cancelled: return .cancelled
        // A concurrent refresh by another client over the store won; its tokens are in the store.
        case .facebookUnavailable, .appleUnavailable, .unavailable, .networkUnavailable, .refreshTokenSuperseded:
            return .transient
        case .facebookRateLimited, .rateLimited: return .throttling
        // Not a failure of the credential: the person has one more step (``resolver``).
        case .secondFactorRequired: return .secondFactor
        // The person must first log in at facebook.com; then the same sign-in works (FBErrorUtility
        // files subcode 459 under "retry").
        case .facebookCheckpoint: return .transient
        case .propertyNotWritable, .facebookPermissionDenied: return .permissions
        // Not `reopenSession`: the session is fine (and a failed Apple link must not sign the person
        // out, as that category does for calls made with the session); a new authorization is needed.
        case .appleCodeInvalid: return .other
        case .internalError, .invalidResponse: return .server
        case _ where Self.reopenCodes.contains(code): return .reopenSession
        default: return (httpStatus ?? 0) >= 500 ? .server : .other
        }
    }

    /// Whether the error says the session a call was made with is over (its access and refresh
    /// tokens refused, or the user disabled), rather than something about the call's own input.
    var endsSession: Bool { Self.sessionCodes.contains(code) }

    private static let sessionCodes: Set<Code> = [
        .unauthorized, .sessionRevoked, .refreshTokenInvalid, .refreshTokenReused, .userDisabled,
    ]

    private static let reopenCodes: Set<Code> = [
        .unauthorized, .sessionRevoked, .refreshTokenInvalid, .refreshTokenReused, .userDisabled, .notSignedIn,
        .facebookTokenInvalid, .facebookTokenExpired, .facebookPasswordChanged, .facebookAppRemoved,
        .facebookLoggedOut, .idTokenExpired, .idTokenIssuedAtInvalid, .facebookCodeInvalid, .nonceMismatch,
        .nonceInvalid, .idTokenReplayed,
    ]

    /// Whether to show the person a message (as FBErrorUtility's `shouldNotifyUser`).
    public var shouldNotifyUser: Bool {
        [.reopenSession, .transient, .throttling, .permissions].contains(category) && code != .notSignedIn
    }

    /// A message suitable for the person, when `shouldNotifyUser`, in their language
    /// (``LatchkeyString``; apps override the wording there).
    public var userMessage: String? {
        guard shouldNotifyUser else { return nil }
        switch category {
        case .reopenSession:
            switch code {
            case .facebookPasswordChanged: return LatchkeyString.facebookPasswordChanged.localized
            case .facebookAppRemoved: return LatchkeyString.facebookAppRemoved.localized
            default: return LatchkeyString.sessionEnded.localized
            }
        case .transient where code == .facebookCheckpoint: return LatchkeyString.facebookCheckpoint.localized
        case .transient where code == .networkUnavailable: return LatchkeyString.networkUnavailable.localized
        case .transient, .throttling: return LatchkeyString.tryAgain.localized
        case .permissions: return LatchkeyString.notAllowed.localized
        default: return nil
        }
    }

    static func sdk(_ code: Code, _ message: String, underlying: (any Error)? = nil) -> LatchkeyError {
        LatchkeyError(code: code, message: message, underlying: underlying)
    }
    static let notSignedIn = sdk(.notSignedIn, "No user is signed in.")
    /// A sign-in whose answer arrived after a sign-out or a newer sign-in: dropped.
    static let superseded = sdk(.cancelled, "A sign-out or a newer sign-in came first.")
    /// A result for a session this client has since ended (signed out, or replaced): dropped.
    static let sessionEnded = sdk(.cancelled, "The session ended while this request was in flight.")
    /// Another client over the same credential store signed out, or signed in another session.
    static let endedElsewhere = sdk(
        .notSignedIn, "Another client sharing the credential store signed out or signed in another session.")
    /// `error` as the SDK's error: a ``LatchkeyError`` as it is; a cancelled task as `cancelled`
    /// (not a failure to show the person); anything else as `code` with `message`, keeping it as
    /// the underlying error.
    static func wrapping(_ error: any Error, as code: Code, _ message: String) -> LatchkeyError {
        if let error = error as? LatchkeyError { return error }
        if error is CancellationError || Task.isCancelled { return .cancelled(error) }
        return sdk(code, message, underlying: error)
    }
    /// The app cancelled the task.
    static func cancelled(_ underlying: (any Error)? = nil) -> LatchkeyError {
        sdk(.cancelled, "The task was cancelled.", underlying: underlying)
    }
}

/// `localizedDescription` says what happened: the person's message when there is one, otherwise the
/// developer's (Foundation's default would be "The operation could not be completed").
extension LatchkeyError: LocalizedError {
    /// ``userMessage``, or ``message`` when the person needs no message.
    public var errorDescription: String? { userMessage ?? message }
    /// The developer's message.
    public var failureReason: String? { message }
}

// MARK: - The SDK's own codes

extension ErrorCode {
    /// The person closed the login sheet, or cancelled on Facebook or on Apple's sheet.
    public static let userCancelled = ErrorCode(rawValue: "user_cancelled")
    /// The app cancelled the task, or the session the work belonged to ended first.
    public static let cancelled = ErrorCode(rawValue: "cancelled")
    /// An Easy Login redirect that does not carry this attempt's `state`: ignored, the attempt goes on.
    public static let stateMismatch = ErrorCode(rawValue: "state_mismatch")
    /// An Easy Login redirect from another server (RFC 9207 `iss`).
    public static let issuerMismatch = ErrorCode(rawValue: "issuer_mismatch")
    /// The server (or Facebook's key endpoint) could not be reached.
    public static let networkUnavailable = ErrorCode(rawValue: "network_unavailable")
    /// An answer the SDK could not read.
    public static let invalidResponse = ErrorCode(rawValue: "invalid_response")
    /// Nobody is signed in (or another client sharing the store signed out or in).
    public static let notSignedIn = ErrorCode(rawValue: "not_signed_in")
    /// The SDK was given something unusable (a JWKS without keys, a redirect URI that is not a URL).
    public static let invalidConfiguration = ErrorCode(rawValue: "invalid_configuration")
    /// An Easy Login redirect arrived with no attempt waiting for it (never started here, finished,
    /// cancelled, or older than an hour): nothing to do; another app or page may have sent it.
    public static let noPendingLogin = ErrorCode(rawValue: "no_pending_login")
    /// Easy Login needs `oauthClientID` and `redirectURI` in the configuration.
    public static let easyLoginNotConfigured = ErrorCode(rawValue: "easy_login_not_configured")
    /// Facebook's own login dialog answered with an error (`FacebookLoginRequest`).
    public static let facebookLoginFailed = ErrorCode(rawValue: "facebook_login_failed")
    /// Sign in with Apple failed on the device (`ASAuthorizationError` other than a cancel), or
    /// gave back no identity token or authorization code.
    public static let appleLoginFailed = ErrorCode(rawValue: "apple_login_failed")
    /// The credential store (file, Keychain) failed to save or clear the session.
    public static let credentialStoreFailed = ErrorCode(rawValue: "credential_store_failed")

    /// Lets a code stand as a `catch` pattern: `catch LatchkeyError.Code.userCancelled { … }`.
    public static func ~= (pattern: ErrorCode, error: LatchkeyError) -> Bool { error.code == pattern }

    /// The same for untyped `catch` clauses: matches a ``LatchkeyError`` with this code.
    public static func ~= (pattern: ErrorCode, error: any Error) -> Bool {
        (error as? LatchkeyError)?.code == pattern
    }
}
