/// Every error code the Latchkey server answers with: stable snake_case strings that clients
/// switch on. New codes may be added; existing ones never change meaning. The README lists them.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The wire value.
    public let rawValue: String
    /// Wraps a wire value (unknown values are kept, so old clients survive new codes).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The wire value.
    public var description: String { rawValue }
    /// A code written as its wire value, e.g. `error.code == "user_cancelled"`.
    public init(stringLiteral value: String) { self.rawValue = value }

    // MARK: Requests

    /// The body is not valid JSON or form data, or has the wrong shape.
    public static let malformedRequest = ErrorCode(rawValue: "malformed_request")
    /// A field is missing, unknown, or out of range.
    public static let invalidRequest = ErrorCode(rawValue: "invalid_request")
    /// The body is larger than the server accepts.
    public static let requestTooLarge = ErrorCode(rawValue: "request_too_large")
    /// No such endpoint.
    public static let notFound = ErrorCode(rawValue: "not_found")
    /// The endpoint exists but not with this method.
    public static let methodNotAllowed = ErrorCode(rawValue: "method_not_allowed")

    // MARK: Facebook credentials

    /// The Facebook access token is invalid (unknown, malformed, or rejected without a reason).
    public static let facebookTokenInvalid = ErrorCode(rawValue: "facebook_token_invalid")
    /// The Facebook access token has expired (Graph 190/463).
    public static let facebookTokenExpired = ErrorCode(rawValue: "facebook_token_expired")
    /// The user changed their Facebook password (Graph 190/460).
    public static let facebookPasswordChanged = ErrorCode(rawValue: "facebook_password_changed")
    /// The user removed the app on Facebook (Graph 190/458).
    public static let facebookAppRemoved = ErrorCode(rawValue: "facebook_app_removed")
    /// The user logged out of Facebook (Graph 190/467).
    public static let facebookLoggedOut = ErrorCode(rawValue: "facebook_logged_out")
    /// The token was issued to an app this server does not serve.
    public static let facebookWrongApp = ErrorCode(rawValue: "facebook_token_wrong_app")
    /// The token is not a user token (an app or page token).
    public static let facebookNotUserToken = ErrorCode(rawValue: "facebook_token_not_user")
    /// Facebook restricts the account until the person logs in at facebook.com and follows its
    /// instructions (Graph subcodes 459 "checkpoint" and 464 "unconfirmed user", code 368).
    public static let facebookCheckpoint = ErrorCode(rawValue: "facebook_checkpoint")
    /// Facebook refused a permission the sign-in needs (Graph codes 10 and 200–299).
    public static let facebookPermissionDenied = ErrorCode(rawValue: "facebook_permission_denied")
    /// Facebook did not accept the code its login dialog returned (used, expired or malformed).
    public static let facebookCodeInvalid = ErrorCode(rawValue: "facebook_code_invalid")
    /// A JWT was sent as `accessToken`: send it as `idToken` instead.
    public static let idTokenSentAsAccessToken = ErrorCode(rawValue: "id_token_sent_as_access_token")
    /// The id token is malformed, badly signed, or uses an algorithm other than RS256.
    public static let idTokenInvalid = ErrorCode(rawValue: "id_token_invalid")
    /// The id token's `kid` is not among Facebook's published keys.
    public static let idTokenUnknownKey = ErrorCode(rawValue: "id_token_unknown_key")
    /// The id token's `iss` is not an accepted issuer.
    public static let idTokenWrongIssuer = ErrorCode(rawValue: "id_token_wrong_issuer")
    /// The id token's `aud` is not a configured app.
    public static let idTokenWrongAudience = ErrorCode(rawValue: "id_token_wrong_audience")
    /// The id token has expired.
    public static let idTokenExpired = ErrorCode(rawValue: "id_token_expired")
    /// The id token was issued too long ago, or in the future.
    public static let idTokenIssuedAtInvalid = ErrorCode(rawValue: "id_token_iat_invalid")
    /// The id token's nonce does not match the nonce sent (raw or SHA-256), or is missing.
    public static let nonceMismatch = ErrorCode(rawValue: "nonce_mismatch")
    /// The server-issued nonce is unknown, expired or already used.
    public static let nonceInvalid = ErrorCode(rawValue: "nonce_invalid")
    /// The id token (its `jti`) was already used.
    public static let idTokenReplayed = ErrorCode(rawValue: "id_token_replayed")
    /// Facebook did not answer in time or answered with a server error; retry later.
    public static let facebookUnavailable = ErrorCode(rawValue: "facebook_unavailable")
    /// Facebook is throttling this app; retry later.
    public static let facebookRateLimited = ErrorCode(rawValue: "facebook_rate_limited")

    // MARK: Sign in with Apple

    /// Apple refused the authorization code (`invalid_grant`: used, older than five minutes, or
    /// issued to another client id), or the code was not issued with the id token sent beside it:
    /// ask Apple for a new authorization.
    public static let appleCodeInvalid = ErrorCode(rawValue: "apple_code_invalid")
    /// Apple did not answer in time, answered with a server error, or refused this server's own
    /// credentials (logged for the operator); retry later.
    public static let appleUnavailable = ErrorCode(rawValue: "apple_unavailable")
    /// A server-to-server notification from Apple was refused: not signed by Apple, for another
    /// app, replayed, expired or malformed. Nothing changed.
    public static let appleNotificationInvalid = ErrorCode(rawValue: "apple_notification_invalid")
    /// A Facebook callback's `signed_request` was refused: not signed by a configured app, not
    /// HMAC-SHA256, or malformed. Nothing changed.
    public static let signedRequestInvalid = ErrorCode(rawValue: "signed_request_invalid")
    /// A Facebook callback's `signed_request` was issued longer ago than
    /// `LATCHKEY_SIGNED_REQUEST_MAX_AGE`, or in the future. Nothing changed.
    public static let signedRequestExpired = ErrorCode(rawValue: "signed_request_expired")

    // MARK: Sessions

    /// The access token is missing, malformed, badly signed or expired.
    public static let unauthorized = ErrorCode(rawValue: "unauthorized")
    /// The session was revoked (sign-out, reuse detection).
    public static let sessionRevoked = ErrorCode(rawValue: "session_revoked")
    /// The refresh token is unknown or expired.
    public static let refreshTokenInvalid = ErrorCode(rawValue: "refresh_token_invalid")
    /// A spent refresh token was presented again: the whole session is revoked.
    public static let refreshTokenReused = ErrorCode(rawValue: "refresh_token_reused")
    /// A spent refresh token was presented moments after a concurrent refresh (another process
    /// of the app, an extension) used its successor: nothing changed, the session lives on in the
    /// newer token, which the caller should read back from shared storage.
    public static let refreshTokenSuperseded = ErrorCode(rawValue: "refresh_token_superseded")
    /// The user is disabled.
    public static let userDisabled = ErrorCode(rawValue: "user_disabled")
    /// The property may not be written by users.
    public static let propertyNotWritable = ErrorCode(rawValue: "property_not_writable")
    /// Deleting the account, adding or unlinking an identity, or completing a merge needs a
    /// recent sign-in (`LATCHKEY_REAUTHENTICATION_WINDOW`): sign in again (or link the same
    /// credential again), then retry.
    public static let reauthenticationRequired = ErrorCode(rawValue: "reauthentication_required")

    // MARK: Identities

    /// The identity just proven belongs to another user. The error carries a `linkTicket`: sign
    /// in with the same credential, then send the ticket to `POST /v1/users/me/identities/complete`
    /// to merge the two accounts.
    public static let identityAlreadyLinked = ErrorCode(rawValue: "identity_already_linked")
    /// Unlinking would leave the account with no way to sign in.
    public static let lastSignInMethod = ErrorCode(rawValue: "last_sign_in_method")
    /// The link ticket is forged, expired, already used, or was issued for another pair of accounts.
    public static let linkTicketInvalid = ErrorCode(rawValue: "link_ticket_invalid")
    /// An Easy Login `link_request` is forged, expired, or not for this request's PKCE challenge,
    /// or its session has ended (in an Easy Login redirect's `error_code`, or when its code is redeemed).
    public static let linkRequestInvalid = ErrorCode(rawValue: "link_request_invalid")

    // MARK: Second factor

    /// The person has a second factor: the sign-in (401) or the operation (403, which needs a
    /// session at `aal` 2) waits for a code sent with the error's `challenge` to
    /// `POST /v1/auth/factor`.
    public static let secondFactorRequired = ErrorCode(rawValue: "second_factor_required")
    /// The code is wrong, or was already used (a TOTP code is accepted once): the challenge takes
    /// another until it runs out of attempts.
    public static let factorCodeInvalid = ErrorCode(rawValue: "factor_code_invalid")
    /// The challenge is unknown, expired, used, or out of attempts: sign in (or ask for a step-up)
    /// again.
    public static let factorChallengeInvalid = ErrorCode(rawValue: "factor_challenge_invalid")
    /// No such factor of the person's (or, verifying, none pending with this id).
    public static let factorNotFound = ErrorCode(rawValue: "factor_not_found")
    /// The person has no active second factor (a step-up, new recovery codes).
    public static let secondFactorNotEnrolled = ErrorCode(rawValue: "second_factor_not_enrolled")
    /// The person holds as many factors as the server allows.
    public static let tooManyFactors = ErrorCode(rawValue: "too_many_factors")

    // MARK: OAuth (Easy Login and the token endpoint)

    /// `grant_type` is not `authorization_code` or `refresh_token`.
    public static let unsupportedGrantType = ErrorCode(rawValue: "unsupported_grant_type")
    /// `client_id` names no registered OAuth client.
    public static let clientUnknown = ErrorCode(rawValue: "client_unknown")
    /// The authorization code is unknown, expired, or bound to another client, redirect URI or verifier.
    public static let authorizationCodeInvalid = ErrorCode(rawValue: "authorization_code_invalid")
    /// The person took longer on Facebook's dialog than the server waits (`LATCHKEY_EASY_LOGIN_TTL`).
    public static let loginRequestExpired = ErrorCode(rawValue: "login_request_expired")
    /// The authorization code was already redeemed: the session it opened is now revoked.
    public static let authorizationCodeReused = ErrorCode(rawValue: "authorization_code_reused")

    // MARK: Operators (the admin API)

    /// No admin key, or one that is unknown, malformed or revoked.
    public static let adminKeyInvalid = ErrorCode(rawValue: "admin_key_invalid")
    /// The data-deletion request is not waiting for an operator's decision; nothing changed.
    public static let deletionNotPending = ErrorCode(rawValue: "deletion_not_pending")

    // MARK: Abuse limits

    /// An abuse limit was reached (per client address, Facebook identity or endpoint); retry after
    /// `Retry-After` seconds.
    public static let rateLimited = ErrorCode(rawValue: "rate_limited")

    // MARK: Server

    /// The server is starting or its database is unreachable.
    public static let unavailable = ErrorCode(rawValue: "unavailable")
    /// Anything unexpected; details are in the server log only.
    public static let internalError = ErrorCode(rawValue: "internal_error")
}
