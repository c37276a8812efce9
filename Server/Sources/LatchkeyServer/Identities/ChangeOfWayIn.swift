/// A change of how a person signs in, each of which needs a recent sign-in: what
/// `403 reauthentication_required` names, so the app can tell the person what to sign in again for.
enum ChangeOfWayIn: String, Sendable {
    /// `DELETE /v1/users/me`.
    case deleteAccount = "Deleting the account"
    /// `POST /v1/users/me/identities`, or an Easy Login link.
    case link = "Adding a sign-in method"
    /// `DELETE /v1/users/me/identities/{provider}/{subject}`.
    case unlink = "Removing a sign-in method"
    /// `POST /v1/users/me/identities/complete`.
    case merge = "Merging the two accounts"
    /// Adding, activating or removing a factor, or new recovery codes.
    case secondFactor = "Changing the second factor"
}
