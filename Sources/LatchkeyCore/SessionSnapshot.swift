/// The session as an app shows it: the state and the user, taken together.
public struct SessionSnapshot: Sendable, Equatable {
    /// The session's state.
    public var state: AuthState
    /// The user of the session the client holds: signed in, or loaded at launch and not yet
    /// confirmed by the server (`createdTokenLoaded`, for example offline).
    public var user: LatchkeyUser?
    /// Orders the snapshots of one client: a later change has a higher revision. Observers that
    /// also read ``LatchkeyClient/snapshot`` directly skip stream elements older than what they hold.
    public internal(set) var revision: UInt64 = 0
    /// The credential store's last write failure, while no write has succeeded since: the session
    /// works, but may not survive the app being killed. The client saves again on its next
    /// refresh and on ``LatchkeyClient/syncWithStore()``.
    public internal(set) var credentialStoreError: LatchkeyError?

    /// Creates a snapshot (the client makes these; public so apps can test their views).
    public init(state: AuthState, user: LatchkeyUser?) {
        self.state = state
        self.user = user
    }

    /// Same state, user and store failure (the revision is bookkeeping, not content).
    public static func == (lhs: SessionSnapshot, rhs: SessionSnapshot) -> Bool {
        lhs.state == rhs.state && lhs.user == rhs.user && lhs.credentialStoreError == rhs.credentialStoreError
    }

    /// Whether the app should show the person as signed in: a session is open, or one was loaded
    /// at launch and has not been refused (an offline launch keeps the person signed in).
    public var isSignedIn: Bool { user != nil && (state.isOpen || state == .createdTokenLoaded) }
}
