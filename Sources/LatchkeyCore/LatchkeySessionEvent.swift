import Foundation

/// What a login button reports, after the Facebook SDK's `FBLoginViewDelegate`: the signed-in
/// face shown (`loginViewShowingLoggedInUser:`), the user's information fetched
/// (`loginViewFetchedUserInfo:user:`), the signed-out face shown (`loginViewShowingLoggedOutUser:`)
/// and an error (`loginView:handleError:`).
public enum LatchkeySessionEvent: Sendable, Equatable {
    /// The person is now shown signed in (after a sign-in, or at launch with a stored session).
    case showingSignedInUser
    /// The user's information arrived or changed (a sign-in, a session restored, a reload).
    case fetchedUser(LatchkeyUser)
    /// The person is now shown signed out (at launch without a session, after a sign-out, or when
    /// the server ended the session).
    case showingSignedOutUser
    /// A sign-in or sign-out started through the model failed. A person closing the login sheet is
    /// reported too (`user_cancelled`, whose ``LatchkeyError/shouldNotifyUser`` is false); work the
    /// app or a sign-out cancelled (`cancelled`) is not.
    case failed(LatchkeyError)
}

/// Names the button (or other caller) an action of ``LatchkeySessionModel`` was started by, so
/// that its failure reaches that caller's ``LatchkeySessionModel/events(for:)`` stream and no
/// other: two windows showing a button each alert only their own. Keep one per button for its
/// lifetime (`@State`).
public struct LatchkeyActionID: Hashable, Sendable {
    private let id = UUID()
    /// A new, unique id.
    public init() {}
}
