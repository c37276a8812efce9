/// The session's state, modelled on the Facebook SDK's `FBSessionState` (facebook-protocol.md §11).
public enum AuthState: String, Sendable, Equatable, CaseIterable {
    /// No session yet.
    case created
    /// Tokens were found in the credential store at launch and are not confirmed yet (a refresh is
    /// due, or failed offline); `currentUser` is the stored user. `restoreSession()` again, or any
    /// successful refresh, opens the session.
    case createdTokenLoaded
    /// The credential store could not be read at launch (on iOS, before the first unlock after a
    /// reboot the Keychain is locked): whether someone is signed in is not known yet. Nothing was
    /// signed out or cleared; `restoreSession()` again (when protected data becomes available, or
    /// the app comes to the foreground) finds out. Not "signed out": offer no sign-in yet.
    case storeUnreadable
    /// A sign-in is in progress.
    case opening
    /// Signed in.
    case open
    /// Signed in, and the tokens were refreshed.
    case openTokenExtended
    /// The sign-in failed.
    case closedLoginFailed
    /// Signed out, or the session ended.
    case closed

    /// Whether moving to `next` is allowed (FBSession's table; `created` is reached only by starting over).
    public func canMove(to next: AuthState) -> Bool {
        switch next {
        case .created: return false
        case .createdTokenLoaded, .opening: return self == .created
        case .storeUnreadable: return self == .created
        case .open: return self == .createdTokenLoaded || self == .opening
        case .openTokenExtended: return self == .open || self == .openTokenExtended
        case .closedLoginFailed: return [.created, .createdTokenLoaded, .opening].contains(self)
        // A session loaded at launch can end before it opens: signed out, or refused by the server.
        case .closed: return self == .open || self == .openTokenExtended || self == .createdTokenLoaded
        }
    }

    /// Whether a user is signed in.
    public var isOpen: Bool { self == .open || self == .openTokenExtended }
}
