import Foundation
import LatchkeyAPI

/// Guests, linking identities, completing a conflict by merging accounts, and deleting the
/// account (the DocC article "Linking and deleting" walks through each).
extension LatchkeyClient {
    // MARK: Guests

    /// Signs in as a guest: a user with no identity (``LatchkeyUser/isAnonymous``), for apps that
    /// let people start before they sign in (the server must allow it: `LATCHKEY_ANONYMOUS_USERS`).
    /// Keep the guest's data when the person signs in later with ``link(with:fieldsMapping:)``
    /// or ``linkWithApple(using:scopes:)``, not ``signIn(with:fieldsMapping:)`` or
    /// ``signInWithApple(using:scopes:)``, which would open another account.
    /// - Throws: `not_found` when the server has guests off; as ``signIn(with:fieldsMapping:)``
    ///   otherwise.
    @discardableResult
    public func signInAnonymously() async throws(LatchkeyError) -> SignInResult {
        let attempt = beginSignIn()
        do {
            let answer = try await transport.send("POST", "v1/auth/anonymous", json: [:], as: SignInBody.self)
            let user = LatchkeyUser(answer.user)
            try await adoptSignIn(answer.session, user: user, attempt: attempt)
            log(.info, "Signed in as a guest.")
            return SignInResult(user: user, isNewUser: answer.isNewUser)
        } catch {
            throw failSignIn(attempt: attempt, error)
        }
    }

    // MARK: Linking

    /// Adds the Facebook identity `credential` proves to the signed-in user (Firebase's
    /// `link(with:)`), as ``link(with:)`` with ``LinkCredential/facebook(_:fieldsMapping:)``.
    /// - Returns: the user with the identity.
    @discardableResult
    public func link(
        with credential: FacebookCredential, fieldsMapping: [String: String]? = nil
    ) async throws(LatchkeyError) -> LatchkeyUser {
        try await link(with: .facebook(credential, fieldsMapping: fieldsMapping))
    }

    /// Adds the identity `credential` proves (Facebook, or Sign in with Apple:
    /// `link(with: .apple(credential, rawNonce: nonce.raw))`) to the signed-in user. A guest
    /// becomes a full user and keeps its id and properties; linking an identity the user has
    /// already changes nothing.
    ///
    /// Adding an identity a full user does not have yet needs a session that signed in recently
    /// (``LatchkeyError/Code/reauthenticationRequired`` otherwise); re-linking one it has is that
    /// fresh sign-in.
    ///
    /// When the identity belongs to another account the error's code is
    /// ``LatchkeyError/Code/identityAlreadyLinked`` and it carries a ``LatchkeyError/linkTicket``:
    /// to join the two, sign in with the same credential (that is the other account) and call
    /// ``completeLink(ticket:)``, which merges the account that asked into it. An Apple
    /// authorization code is single use, and the conflict has spent it: sign in with Apple again
    /// (a new authorization) rather than with the same credential.
    /// - Returns: the user with the identity.
    @discardableResult
    public func link(with credential: LinkCredential) async throws(LatchkeyError) -> LatchkeyUser {
        let answer = try await authorized(
            "POST", "v1/users/me/identities", json: credential.body, as: UserAnswerBody.self)
        return try await adoptUser((answer.0.user, answer.1))
    }

    /// Removes an identity from the signed-in user, and signs the account out on its other
    /// devices. The server refuses to remove the last one (``LatchkeyError/Code/lastSignInMethod``)
    /// or to act for a session that signed in long ago
    /// (``LatchkeyError/Code/reauthenticationRequired``), and answers `not_found` for one not linked.
    /// Unlinking Apple (`unlink(provider: "apple", subject: …)`) also has the server revoke the
    /// Apple tokens it kept for the person, in the background.
    /// - Parameters:
    ///   - provider: the identity's provider (`facebook` or `apple`).
    ///   - subject: its subject (``IdentityBody/subject``; for Apple, the credential's `user`,
    ///     ``AppleIDCredential/user``).
    /// - Returns: the user without it.
    @discardableResult
    public func unlink(provider: String = "facebook", subject: String) async throws(LatchkeyError) -> LatchkeyUser {
        let path = "v1/users/me/identities/\(Self.pathComponent(provider))/\(Self.pathComponent(subject))"
        let answer = try await authorized("DELETE", path, json: nil, as: UserAnswerBody.self)
        return try await adoptUser((answer.0.user, answer.1))
    }

    /// Completes a conflict (``LatchkeyError/linkTicket``) from the account that owns the
    /// identity: the account that asked to link is merged into the signed-in one. Its identities
    /// move over, its properties fill the keys this account lacks (this account's win), and it is
    /// deleted with its sessions.
    /// - Returns: this account after the merge, and the merged account's id, for moving the app's
    ///   own data.
    /// - Throws: ``LatchkeyError/Code/linkTicketInvalid`` for a ticket used, expired, altered, or
    ///   issued for another account.
    @discardableResult
    public func completeLink(ticket: String) async throws(LatchkeyError) -> LinkCompletion {
        let answer = try await authorized(
            "POST", "v1/users/me/identities/complete", json: LinkCompletionRequest(linkTicket: ticket).json,
            as: LinkCompletionBody.self)
        let user = try await adoptUser((answer.0.user, answer.1))
        return LinkCompletion(user: user, mergedUserID: answer.0.mergedUserID)
    }

    // MARK: Deleting

    /// Deletes the signed-in user's account on the server (what App Store Review Guideline
    /// 5.1.1(v) asks apps to offer), then ends the session here. The server revokes the app's
    /// Facebook permissions and the person's Apple tokens in the background (what Apple requires
    /// of apps that offer Sign in with Apple).
    ///
    /// The server allows it only shortly after a sign-in: otherwise the error's code is
    /// ``LatchkeyError/Code/reauthenticationRequired``. Ask the person to sign in again (or link
    /// the same credential again, which counts as a fresh sign-in), then call this again. A guest
    /// may always delete itself.
    public func deleteAccount() async throws(LatchkeyError) {
        let answer = try await authorized("DELETE", "v1/users/me", json: nil, as: Data.self)
        guard answer.1 == epoch else { throw LatchkeyError.sessionEnded }
        // Cleared before returning: an app that deletes the account and quits must not find the
        // deleted session at its next launch.
        if let ended = endLocally(clearingStore: false, reason: "The account was deleted.") {
            _ = await persist(.clear(ended)).value
        }
    }

    /// A path segment with everything but unreserved characters percent-encoded.
    static func pathComponent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))
            ?? text
    }
}

/// The outcome of ``LatchkeyClient/completeLink(ticket:)``.
public struct LinkCompletion: Sendable, Equatable {
    /// The signed-in user after the merge.
    public let user: LatchkeyUser
    /// The account merged into it, which no longer exists.
    public let mergedUserID: String

    /// Creates an outcome (the client makes these; public so apps can test code that receives one).
    public init(user: LatchkeyUser, mergedUserID: String) {
        self.user = user
        self.mergedUserID = mergedUserID
    }
}

extension FacebookCredential {
    /// The body of `POST /v1/auth/facebook` and `POST /v1/users/me/identities` for this credential.
    func request(fieldsMapping: [String: String]?) -> FacebookExchangeRequest {
        var request = FacebookExchangeRequest(fieldsMapping: fieldsMapping)
        switch kind {
        case .accessToken(let token): request.accessToken = token
        case .limitedLogin(let idToken, let rawNonce):
            request.idToken = idToken
            request.nonce = rawNonce
        }
        return request
    }
}
