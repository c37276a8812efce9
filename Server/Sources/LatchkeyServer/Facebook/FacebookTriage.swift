import HTTPTypes
import LatchkeyAPI

/// Decides, in one place, what a Graph error means for our client (facebook-protocol.md §6):
/// something about the person's credential (a typed 4xx that changes nothing), trouble at Facebook
/// (a 503 with Retry-After), or our own misconfiguration, the only case that is a 500, since a 500
/// pages an operator.
enum FacebookTriage {
    /// Throttling: per app (4), per user (17), page (32), application limit (341), custom (613),
    /// the legacy rate code SDKs treat as transient (9), and business-use-case limits (80001–80014).
    static func isThrottling(_ code: Int) -> Bool {
        [4, 9, 17, 32, 341, 613].contains(code) || (80_001...80_014).contains(code)
    }

    /// Trouble at Facebook that any call can meet: throttling, a server error, an error flagged
    /// `is_transient`, or code 2 (service temporarily down). `nil` for anything else.
    static func facebookTrouble(_ failure: GraphFailure) -> APIError? {
        if let code = failure.code, isThrottling(code) {
            return APIError(
                .serviceUnavailable, .facebookRateLimited, "Facebook is rate-limiting this app; try again later.",
                retryAfter: 60, cause: failure)
        }
        if failure.status >= 500 || failure.isTransient || failure.code == 2 {
            return .facebookUnavailable(
                "Facebook is temporarily unavailable (HTTP \(failure.status)); try again shortly.", cause: failure)
        }
        return nil
    }

    /// An error about a person's access token: `debug_token`'s `data.error`, or `/me` and `/app`
    /// called with the token. Never a 500: whatever Facebook says about a token is the token's
    /// problem or Facebook's.
    static func userToken(_ failure: GraphFailure) -> APIError {
        if let trouble = facebookTrouble(failure) { return trouble }
        // Facebook's error-handling guide: the subcode names the reason when present (§6.3);
        // without one, Facebook's own words still do.
        switch failure.reasonSubcode {
        case 463: return APIError(.unauthorized, .facebookTokenExpired, "The Facebook access token has expired.")
        case 460:
            return APIError(
                .unauthorized, .facebookPasswordChanged, "The Facebook session ended because the password changed.")
        case 458: return APIError(.unauthorized, .facebookAppRemoved, "The person removed this app on Facebook.")
        case 467: return APIError(.unauthorized, .facebookLoggedOut, "The person logged out of Facebook.")
        case 459, 464:
            return APIError(
                .forbidden, .facebookCheckpoint,
                "Facebook needs the person to log in at facebook.com and follow its instructions first.",
                cause: failure)
        default: break
        }
        switch failure.code ?? 0 {
        case 1:
            // "API Unknown": possibly temporary (§6.2).
            return .facebookUnavailable(
                "Facebook could not check the token just now; try again shortly.", cause: failure)
        case 10, 200...299:
            return APIError(
                .forbidden, .facebookPermissionDenied, "Facebook refused a permission this sign-in needs.",
                cause: failure)
        case 368:
            return APIError(
                .forbidden, .facebookCheckpoint, "Facebook has temporarily blocked this account.", cause: failure)
        default:
            return APIError(.unauthorized, .facebookTokenInvalid, "Facebook rejected the access token.", cause: failure)
        }
    }

    /// A top-level error from `debug_token`. Ours only when Facebook says so in words about the
    /// caller (see `GraphFailure.isAboutOurCredentials`): the input token is chosen by whoever
    /// calls us, so an error we do not recognise is the token's (a 401), logged at error level so an
    /// operator still sees a pattern. Facebook refuses to describe another app's user token with
    /// `(#100) The App_id in the input_token did not match the Viewing App`.
    static func inspection(_ failure: GraphFailure) -> APIError {
        if let trouble = facebookTrouble(failure) { return trouble }
        if failure.isAboutOurCredentials { return credentialsRefused(failure) }
        let message = failure.message.lowercased()
        if failure.code == 100, message.contains("input_token"),
            message.contains("app_id") || message.contains("did not match")
        {
            return APIError(.unauthorized, .facebookWrongApp, "This Facebook token was issued to another app.")
        }
        if failure.code == 190, message.contains("debug only") {
            // A "session info" token (§4): a real token, but not one that signs anybody in.
            return APIError.notUserToken
        }
        if failure.code == 1 {
            return .facebookUnavailable(
                "Facebook could not check the token just now; try again shortly.", cause: failure)
        }
        if let subcode = failure.reasonSubcode, [458, 459, 460, 463, 464, 466, 467].contains(subcode) {
            // Session subcodes (§6.3) describe a person's login session; our app token has none.
            return userToken(failure)
        }
        return APIError(
            .unauthorized, .facebookTokenInvalid, "Facebook rejected the access token.",
            cause: UnrecognizedGraphError(failure: failure))
    }

    /// An error from `/me` once `debug_token` has vouched for the token: a refused proof means our
    /// secret is wrong, an unknown field (100) or a deprecated one (12) means our field list is
    /// wrong for this Graph version; both are ours. The rest is about the token, as `userToken`.
    static func profile(_ failure: GraphFailure) -> APIError {
        if let trouble = facebookTrouble(failure) { return trouble }
        if failure.isProofRefusal || failure.isAboutOurCredentials { return credentialsRefused(failure) }
        if failure.code == 100 || failure.code == 12 {
            return APIError(
                .internalServerError, .internalError, "Facebook refused the profile fields this server asks for.",
                cause: UnrecognizedGraphError(failure: failure))
        }
        return userToken(failure)
    }

    /// An error from the token endpoint exchanging Easy Login's code (§3.6). A wrong secret (code
    /// 1 "Error validating client secret.", sometimes with subcode 33) and an unknown app id (101)
    /// are ours. A used (36009), expired (36007), malformed or forged code is the browser's, and so
    /// is a `redirect_uri` mismatch (36008): we send the dialog and the exchange the same URI, so
    /// a mismatch means the code was minted for another redirect (anyone can get one for this app
    /// id with `fb{APPID}://authorize`) and pasted into our callback.
    static func codeExchange(_ failure: GraphFailure) -> APIError {
        if let trouble = facebookTrouble(failure) { return trouble }
        if failure.isAboutOurCredentials { return credentialsRefused(failure) }
        if failure.code == 1 {
            return .facebookUnavailable("Facebook could not confirm the login just now; try again.", cause: failure)
        }
        return APIError(
            .unauthorized, .facebookCodeInvalid, "Facebook did not accept the login's code; start again.",
            cause: failure)
    }

    /// Facebook refused our own app credentials: a server misconfiguration, the one 500.
    static func credentialsRefused(_ failure: GraphFailure) -> APIError {
        APIError(
            .internalServerError, .internalError, "The server's Facebook app credentials were refused.",
            cause: CredentialRefusal(failure: failure))
    }
}

/// The cause of a 500 when Facebook refused our own app token, secret or proof; logged at error
/// level, naming the setting to fix, never sent, and reported by `/ready`.
struct CredentialRefusal: Error, Sendable, CustomStringConvertible {
    let failure: GraphFailure
    var description: String {
        "Facebook refused the app credentials (check LATCHKEY_FACEBOOK_APP_SECRET): \(failure)"
    }
}

/// A Graph error Latchkey does not recognise, answered as the token's problem (or, from `/me`,
/// as ours) and logged at error level: a new Facebook behaviour someone should look at.
struct UnrecognizedGraphError: Error, Sendable, CustomStringConvertible {
    let failure: GraphFailure
    var description: String { "unrecognised Graph error: \(failure)" }
}
