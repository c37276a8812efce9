import Foundation
import LatchkeyAPI
import LatchkeyShared

/// The facts about a stored authorization code that decide what a presentation of it does.
package struct StoredAuthorizationCode: Sendable, Equatable {
    /// The client it was issued to.
    package var clientID: String
    /// The redirect URI of the authorization request.
    package var redirectURI: String
    /// The S256 challenge of the app's verifier.
    package var codeChallenge: String
    /// When it stops being redeemable.
    package var expiresAt: Date
    /// Whether its user is disabled now.
    package var userDisabled: Bool
    /// Whether it was presented before (redeemed or refused: either spends it).
    package var spent: Bool
    /// Whether that earlier presentation opened its session.
    package var redeemed: Bool

    /// Creates the facts.
    package init(
        clientID: String, redirectURI: String, codeChallenge: String, expiresAt: Date, userDisabled: Bool,
        spent: Bool = false, redeemed: Bool = false
    ) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.expiresAt = expiresAt
        self.userDisabled = userDisabled
        self.spent = spent
        self.redeemed = redeemed
    }
}

/// What presenting an authorization code does (`Verdicts.code`).
package enum CodeVerdict: Sendable, Equatable {
    /// Spend the code as redeemed and open the session it was issued for.
    case redeem
    /// Spend the code unredeemed and answer this (`.invalid` or `.userDisabled`).
    case refuse(CodeRedemption)
    /// Revoke the session the code's first redemption opened and answer `.reused`: a code
    /// presented twice was intercepted (RFC 6749 §4.1.2, §10.5).
    case revokeSession
    /// Change nothing and answer `.invalid`: the code was spent without opening a session.
    case ignore
}

extension Verdicts {
    /// What a presentation of a stored code does (RFC 6749 §4.1.3, RFC 7636 §4.6). A spent code
    /// is never redeemed again: a second presentation revokes the session the first opened. An
    /// unspent one is redeemed only when the client, the redirect URI and the verifier's challenge
    /// all match (compared in constant time) and it has not expired, and then only for a user who
    /// is not disabled; whatever the verdict, it is spent, since a code presented with the wrong
    /// verifier may be in a thief's hands.
    package static func code(
        _ stored: StoredAuthorizationCode, presentation: CodePresentation, now: Date
    )
        -> CodeVerdict
    {
        if stored.spent { return stored.redeemed ? .revokeSession : .ignore }
        let bound =
            ConstantTime.equals(stored.clientID, presentation.clientID)
            && ConstantTime.equals(stored.redirectURI, presentation.redirectURI)
            && ConstantTime.equals(stored.codeChallenge, presentation.codeChallenge)
        guard bound, stored.expiresAt > now else { return .refuse(.invalid) }
        guard !stored.userDisabled else { return .refuse(.userDisabled) }
        return .redeem
    }
}
