#if canImport(Observation)
#if canImport(Combine)
import Combine
#endif
import Foundation
import Observation

/// The session for SwiftUI: who is signed in, read synchronously on the main actor, observed by
/// views, with the actions a login button needs.
///
/// One model for every OS the SDK runs on: an `ObservableObject` from iOS 15 and macOS 12
/// (`@StateObject`, `@ObservedObject`, `@EnvironmentObject`), and `Observable` from iOS 17 and
/// macOS 14 as well (`@State`, `.environment(_:)`, `@Environment(LatchkeySessionModel.self)`).
///
/// It mirrors ``LatchkeyClient/sessionSnapshots``, so views never `await` to read the user, and
/// every model over one client (two windows, a view and a widget) shows the same snapshot. Create
/// it next to the client, where the app starts, and pass it down:
///
/// ```swift
/// @State private var session = LatchkeySessionModel(client: AppServices.client)        // iOS 17
/// @StateObject private var session = LatchkeySessionModel(client: AppServices.client)  // iOS 15
/// …
/// ContentView().environment(session).task { await session.restore() }        // iOS 17
/// ContentView().environmentObject(session).task { await session.restore() }  // iOS 15
/// ```
///
/// Actions (``signIn(_:)``, ``signOut(scope:)``, ``handleOpenURL(_:)``) never throw: their outcome
/// is the state, ``lastError`` and ``events()``. Apps that want the thrown error call the client.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
@MainActor
public final class LatchkeySessionModel {
    /// The client the model mirrors and acts through.
    public let client: LatchkeyClient

    /// The session's state, as last reported by the client.
    public private(set) var state: AuthState {
        get { read(\.state, published.state) }
        set { change(\.state) { published.state = newValue } }
    }
    /// The user: signed in, or loaded at launch and not yet confirmed (offline).
    public private(set) var user: LatchkeyUser? {
        get { read(\.user, published.user) }
        set { change(\.user) { published.user = newValue } }
    }
    /// Whether ``restore()`` has found out whether someone is signed in: before that, `.created`
    /// means "not known yet", not "signed out" (show a placeholder, not the login button, to avoid
    /// a flash). Stays false while the store cannot be read (``isSessionUnreadable``).
    public private(set) var hasRestored: Bool {
        get { read(\.hasRestored, published.hasRestored) }
        set { change(\.hasRestored) { published.hasRestored = newValue } }
    }
    /// Sign-ins and sign-outs started through this model and not finished.
    public private(set) var actionsInFlight: Int {
        get { read(\.actionsInFlight, published.actionsInFlight) }
        set { change(\.actionsInFlight) { published.actionsInFlight = newValue } }
    }
    /// The last failure of an action, for an alert. A person closing the login sheet and
    /// cancelled work are not failures here (they are still reported in ``events()``); the next
    /// action's outcome replaces it.
    public var lastError: LatchkeyError? {
        get { read(\.lastError, published.lastError) }
        set { change(\.lastError) { published.lastError = newValue } }
    }
    /// A sign-in through this model that waits for the person's second factor: show a code prompt
    /// (``buttonState`` is `.secondFactor`, naming the factors in
    /// ``MultiFactorResolver/hints``), then call ``resolveSecondFactor(code:action:)`` or
    /// ``resolveSecondFactor(recoveryCode:action:)``. Cleared when the sign-in finishes, dies, or
    /// ``cancelSecondFactor()``, and by the next sign-in or sign-out.
    public private(set) var pendingSecondFactor: MultiFactorResolver? {
        get { read(\.pendingSecondFactor, published.pendingSecondFactor) }
        set { change(\.pendingSecondFactor) { published.pendingSecondFactor = newValue } }
    }

    /// What views read: behind the properties above, which report each read and each change.
    private var published = Values()
    private struct Values {
        var state = AuthState.created
        var user: LatchkeyUser?
        var hasRestored = false
        var actionsInFlight = 0
        var lastError: LatchkeyError?
        var pendingSecondFactor: MultiFactorResolver?
    }

    /// Observation's registrar where Observation runs (iOS 17, macOS 14, Linux): kept untyped,
    /// since the model itself runs on older systems too.
    private let registrar: Any? = {
        guard #available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *) else { return nil }
        return ObservationRegistrar()
    }()
    #if canImport(Combine)
    /// Bumped by every change, so that `objectWillChange` announces it (ObservableObject).
    @Combine.Published private var changes: UInt64 = 0
    #endif

    private var shownFace: Face?
    private var revision: UInt64?
    private var eventObservers: [UInt64: EventObserver] = [:]
    /// The store failure last reported, so that each is reported once.
    private var reportedStoreError: LatchkeyError?
    private var nextEventObserver: UInt64 = 0
    private let mirroring: Task<Void, Never>

    /// A model over `client`; it starts mirroring the client's session at once.
    public init(client: LatchkeyClient) {
        self.client = client
        let reference = ModelReference()
        mirroring = Task { @MainActor in
            for await snapshot in await client.sessionSnapshots {
                guard let model = reference.model else { return }
                model.apply(snapshot)
            }
        }
        reference.model = self
    }

    deinit { mirroring.cancel() }

    /// `value`, its read of `keyPath` reported to Observation (the view reading it is redrawn when
    /// it changes).
    private func read<Value>(_ keyPath: KeyPath<LatchkeySessionModel, Value>, _ value: Value) -> Value {
        if #available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *),
            let registrar = registrar as? ObservationRegistrar
        {
            registrar.access(self, keyPath: keyPath)
        }
        return value
    }

    /// Applies `update`, announced to ObservableObject's subscribers before and to Observation's
    /// around it.
    private func change<Value>(_ keyPath: KeyPath<LatchkeySessionModel, Value>, _ update: () -> Void) {
        #if canImport(Combine)
        changes &+= 1
        #endif
        if #available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *),
            let registrar = registrar as? ObservationRegistrar
        {
            registrar.withMutation(of: self, keyPath: keyPath, update)
        } else {
            update()
        }
    }

    // MARK: Reading

    /// The state and user together.
    public var snapshot: SessionSnapshot { SessionSnapshot(state: state, user: user) }

    /// Whether to show the person as signed in (``SessionSnapshot/isSignedIn``).
    public var isSignedIn: Bool { snapshot.isSignedIn }

    /// Whether a sign-in or sign-out is under way (through this model, or a sign-in elsewhere
    /// without a session): a button shows progress and ignores taps.
    public var isWorking: Bool { actionsInFlight > 0 || state == .opening }

    /// Whether the stored session cannot be read yet (`AuthState.storeUnreadable`: on iOS, before
    /// the first unlock after a reboot). Nobody was signed out: the model reads again when
    /// ``protectedDataBecameAvailable()`` or ``sceneBecameActive()`` is called (the `Latchkey`
    /// module's `latchkeyLifecycle(_:)` modifier calls both). Show a placeholder meanwhile.
    public var isSessionUnreadable: Bool { state == .storeUnreadable }

    /// What a login button shows.
    public var buttonState: LoginButtonState {
        if isWorking || isSessionUnreadable { return .working }
        if isSignedIn { return .signedIn }
        if pendingSecondFactor != nil { return .secondFactor }
        return hasRestored || state != .created ? .signedOut : .working
    }

    /// The user's picture URL: the `picture` property, which Latchkey's default fields mapping
    /// fills with Facebook's picture URL. `nil` without a user or a picture (show a silhouette).
    public var pictureURL: URL? { pictureURL(property: "picture") }

    /// The picture URL stored under another property name (a custom fields mapping).
    public func pictureURL(property: String) -> URL? {
        guard isSignedIn, let text = user?.string(property), let url = URL(string: text),
            let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http"
        else { return nil }
        return url
    }

    /// A new stream of every event (``LatchkeySessionEvent``), for an app-wide handler: every
    /// action's failures, and a credential store failing to save. Like `FBLoginView` when it
    /// appears, it starts with the face shown now (and the user, when signed in), then reports
    /// changes; each call makes an independent stream, ended when its task is.
    public func events() -> AsyncStream<LatchkeySessionEvent> { events(scope: nil) }

    /// A new stream of the events one button reports: the faces and the user, as ``events()``,
    /// but only the failures of the actions started with `action`. Two windows each showing a
    /// button each alert their own failures, not each other's.
    public func events(for action: LatchkeyActionID) -> AsyncStream<LatchkeySessionEvent> { events(scope: action) }

    private func events(scope: LatchkeyActionID?) -> AsyncStream<LatchkeySessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: LatchkeySessionEvent.self)
        switch shownFace {
        case .signedIn:
            continuation.yield(.showingSignedInUser)
            if let reportedUser { continuation.yield(.fetchedUser(reportedUser)) }
        case .signedOut: continuation.yield(.showingSignedOutUser)
        case nil: break
        }
        let id = nextEventObserver
        nextEventObserver += 1
        eventObservers[id] = EventObserver(continuation: continuation, scope: scope)
        continuation.onTermination = { _ in
            Task { @MainActor [weak self] in self?.eventObservers[id] = nil }
        }
        return stream
    }

    // MARK: Acting

    /// Picks up the stored session at launch (``LatchkeyClient/restoreSession()``). Call it once
    /// from the root view's `.task`; offline, the stored user stays shown (`createdTokenLoaded`).
    public func restore() async {
        _ = await client.restoreSession()
        // Where the restore left the session, shown now rather than when the stream delivers it;
        // with `hasRestored` set, `created` means signed out.
        let restored = await client.snapshot
        hasRestored = restored.state != .storeUnreadable
        apply(restored)
        decideFace()  // also when the stream had already shown a later snapshot (apply skips an older one)
    }

    /// Signs in with `method`. A session already open stays open until the new one replaces it.
    /// - Parameter action: who asked (a button's ``LatchkeyActionID``): its failure is reported
    ///   to ``events(for:)`` of that action only.
    public func signIn(_ method: SignInMethod, action: LatchkeyActionID? = nil) async {
        pendingSecondFactor = nil
        await perform(action: action) { client throws(LatchkeyError) in try await method.run(client) }
    }

    /// Finishes the sign-in waiting for a second factor (``pendingSecondFactor``) with the code the
    /// person's authenticator shows. A wrong code leaves it waiting (``lastError`` says so); a
    /// challenge that died (too many wrong codes, expired) clears it: sign in again.
    public func resolveSecondFactor(code: String, action: LatchkeyActionID? = nil) async {
        await resolvePending(action: action) { resolver throws(LatchkeyError) in
            try await resolver.resolve(code: code)
        }
    }

    /// ``resolveSecondFactor(code:action:)`` with one of the person's recovery codes.
    public func resolveSecondFactor(recoveryCode: String, action: LatchkeyActionID? = nil) async {
        await resolvePending(action: action) { resolver throws(LatchkeyError) in
            try await resolver.resolve(recoveryCode: recoveryCode)
        }
    }

    /// Abandons the sign-in waiting for a second factor: the button offers to sign in again.
    public func cancelSecondFactor() {
        pendingSecondFactor = nil
    }

    private func resolvePending(
        action: LatchkeyActionID?,
        _ resolve: @Sendable (MultiFactorResolver) async throws(LatchkeyError) -> SignInResult
    ) async {
        guard let resolver = pendingSecondFactor else { return }
        await perform(action: action) { _ throws(LatchkeyError) in
            _ = try await resolve(resolver)
        }
        // Passed, or dead: either way this challenge is done. A wrong code keeps it.
        if isSignedIn || lastError.map({ $0.code != .factorCodeInvalid && $0.code != .rateLimited }) == true {
            pendingSecondFactor = nil
        }
    }

    /// Signs out. The person is signed out here at once, whatever happens. This device's session
    /// is revoked on the server best effort (``LatchkeyClient/signOut()``: offline is no error);
    /// for `.everywhere`, failing to tell the server is an error, since other devices stay signed in.
    public func signOut(scope: SignOutScope = .thisDevice, action: LatchkeyActionID? = nil) async {
        pendingSecondFactor = nil
        await perform(action: action) { client throws(LatchkeyError) in
            if scope == .everywhere { try await client.signOut(scope: .everywhere) } else { await client.signOut() }
        }
    }

    /// The login button's tap: signs out when signed in, signs in with `method` otherwise, and
    /// does nothing while something is under way (a second tap must not start a second sheet).
    public func toggle(signingInWith method: SignInMethod, action: LatchkeyActionID? = nil) async {
        switch buttonState {
        case .working: return
        case .signedIn: await signOut(action: action)
        case .signedOut, .secondFactor: await signIn(method, action: action)
        }
    }

    /// Abandons an Easy Login waiting for its redirect (``LatchkeyClient/cancelEasyLogin()``): the
    /// button stops waiting, and a late redirect is no longer accepted.
    public func cancelEasyLogin() async {
        await client.cancelEasyLogin()
        apply(await client.snapshot)
    }

    /// The app came to the foreground (`scenePhase` became `.active`). An Easy Login opened in an
    /// outside browser that has not come back stops blocking the button (the person may have
    /// abandoned the browser; the attempt stays redeemable until it expires); a store that could
    /// not be read is read again; and what another client over the store did meanwhile (an
    /// extension refreshing, signing out, signing someone else in) is followed, and a failed save
    /// tried again (``LatchkeyClient/syncWithStore()``).
    public func sceneBecameActive() async {
        await client.stopWaitingForEasyLogin()
        await readStoreAgain()
    }

    /// Protected data became available (on iOS, `UIApplication.protectedDataDidBecomeAvailableNotification`,
    /// the first unlock after a reboot): the store is read again.
    public func protectedDataBecameAvailable() async {
        await readStoreAgain()
    }

    private func readStoreAgain() async {
        if isSessionUnreadable || !hasRestored {
            await restore()
        } else {
            await client.syncWithStore()
            apply(await client.snapshot)
        }
    }

    /// Finishes Easy Login with a redirect from `onOpenURL`. Returns whether the URL was an Easy
    /// Login redirect (handled, successfully or not); other URLs are left to the app.
    ///
    /// Any app or web page can open the app's redirect URI: a URL without the attempt's `state`, or
    /// with no attempt waiting, is ignored (no error shown, nothing ended).
    /// - Parameter action: the action that started the Easy Login, if the app knows it.
    @discardableResult
    public func handleOpenURL(_ url: URL, action: LatchkeyActionID? = nil) async -> Bool {
        guard await client.canHandleOpenURL(url) else { return false }
        await perform(action: action, ignoring: [.stateMismatch, .noPendingLogin]) { client throws(LatchkeyError) in
            _ = try await client.handleOpenURL(url)
        }
        return true
    }

    /// Refetches the user from the server (``LatchkeyClient/reloadUser()``).
    public func reloadUser() async {
        await perform { client throws(LatchkeyError) in _ = try await client.reloadUser() }
    }

    // MARK: Internals

    /// Runs one action: counted while it runs, its failure kept and reported (except the codes
    /// `ignoring`, which leave everything as it was, `lastError` included).
    private func perform(
        action: LatchkeyActionID? = nil, ignoring ignored: Set<LatchkeyError.Code> = [],
        _ work: @Sendable (LatchkeyClient) async throws(LatchkeyError) -> Void
    ) async {
        actionsInFlight += 1
        defer { actionsInFlight -= 1 }
        do {
            try await work(client)
            lastError = nil
        } catch  where ignored.contains(error.code) {
            // Not this app's business (a forged or stale link).
        } catch {
            lastError = nil
            report(error, action: action)
        }
        // The client's snapshots may still be on their way: show where the action left it.
        apply(await client.snapshot)
    }

    private func report(_ error: LatchkeyError, action: LatchkeyActionID?) {
        if error.code == .cancelled { return }
        // Not a failure: one more step, which the button shows.
        if let resolver = error.resolver, resolver.purpose == .signIn {
            pendingSecondFactor = resolver
            emit(.failed(error), action: action)
            return
        }
        if error.code != .userCancelled { lastError = error }
        emit(.failed(error), action: action)
    }

    /// Shows `snapshot` unless a later one is shown already (the stream may still deliver
    /// snapshots older than one an action read directly).
    private func apply(_ snapshot: SessionSnapshot) {
        if let revision, snapshot.revision < revision { return }
        revision = snapshot.revision
        if state != snapshot.state { state = snapshot.state }
        if user != snapshot.user { user = snapshot.user }
        decideFace()
        if snapshot.isSignedIn, let user = snapshot.user, user != reportedUser {
            reportedUser = user
            emit(.fetchedUser(user))
        }
        // A save that keeps failing: the session may not survive the app being killed. Reported
        // once, to the app-wide stream and `lastError` (no button asked for it).
        if snapshot.credentialStoreError != reportedStoreError {
            reportedStoreError = snapshot.credentialStoreError
            if let failure = snapshot.credentialStoreError {
                lastError = failure
                emit(.failed(failure), action: nil)
            }
        }
    }

    /// The user last reported in `fetchedUser`; forgotten with the signed-out face, so the next
    /// sign-in reports its user even when a snapshot carried it before the session opened (one
    /// account replacing another publishes the new user while `opening`).
    private var reportedUser: LatchkeyUser?

    /// Emits a face event when the face to show changes: signed in, or signed out once that is
    /// known (after the restore, a sign-out, or a failed sign-in).
    private func decideFace() {
        let face: Face?
        if isSignedIn {
            face = .signedIn
        } else if state == .closed || state == .closedLoginFailed || (state == .created && hasRestored) {
            // (`storeUnreadable` is not signed out: the face stays undecided.)
            face = .signedOut
        } else {
            face = shownFace  // opening, or not restored yet: keep what is shown
        }
        guard let face, face != shownFace else { return }
        shownFace = face
        switch face {
        case .signedIn: emit(.showingSignedInUser)
        case .signedOut:
            reportedUser = nil
            emit(.showingSignedOutUser)
        }
    }

    /// Hands `event` to the observers; a failure goes to the app-wide streams and to the streams
    /// of the action it answers.
    private func emit(_ event: LatchkeySessionEvent, action: LatchkeyActionID? = nil) {
        for observer in eventObservers.values {
            if case .failed = event, let scope = observer.scope, scope != action { continue }
            observer.continuation.yield(event)
        }
    }

    private struct EventObserver {
        let continuation: AsyncStream<LatchkeySessionEvent>.Continuation
        /// `nil`: every event; else the failures of this action only.
        let scope: LatchkeyActionID?
    }

    private enum Face { case signedIn, signedOut }
}

/// Observation's view of the model (its reads and changes are reported by hand, above).
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, *)
extension LatchkeySessionModel: Observable {}

#if canImport(Combine)
/// ObservableObject's view of the model: `objectWillChange` fires before every change.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
extension LatchkeySessionModel: ObservableObject {}
#endif

/// The model as its mirroring task sees it: weakly, so the task never keeps a model alive.
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
@MainActor
private final class ModelReference {
    weak var model: LatchkeySessionModel?
}
#endif

/// What a login button shows (the Facebook SDK's `FBLoginView` faces).
public enum LoginButtonState: Sendable, Equatable {
    /// "Log in with Facebook".
    case signedOut
    /// A sign-in or sign-out is under way, or the stored session is being looked up: progress, taps ignored.
    case working
    /// "Log out".
    case signedIn
    /// A sign-in waits for the person's second factor: a code prompt
    /// (``LatchkeySessionModel/pendingSecondFactor``); a tap on the button starts over.
    case secondFactor
}
