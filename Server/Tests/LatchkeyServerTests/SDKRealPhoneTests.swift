import Foundation
import Latchkey
import LatchkeyAPI
import Observation
import Testing

/// What real phones do to a session, against the live server and emulator: an answer lost to a
/// suspended app, a Keychain that refuses a write or cannot be read before the first unlock, an
/// Easy Login abandoned in Safari, an extension sharing the session, two windows with a button each.
@Suite("SDK on real phones", .timeLimit(.minutes(3)))
@MainActor
struct SDKRealPhoneTests {
    static func client(
        _ stack: Stack, store: any CredentialStore, gate: GateTransport = GateTransport(),
        background: (any BackgroundWork)? = nil
    ) -> LatchkeyClient {
        LatchkeyClient(
            configuration: LatchkeyConfiguration(
                serverURL: stack.serverURL, facebookAppID: Demo.appID, credentialStore: store, transport: gate,
                clock: { stack.clock.now }, oauthClientID: Demo.clientID, redirectURI: Demo.appRedirect,
                backgroundWork: background))
    }

    /// A credential store that fails its next reads or writes on demand, as a Keychain does when
    /// the device is locked (`errSecInteractionNotAllowed`) or busy; it records its saves.
    actor FlakyStore: CredentialStore {
        struct Refused: Error {}
        private let inner = InMemoryCredentialStore()
        private var failingLoads = 0
        private var failingSaves = 0
        private var failingClears = 0
        private(set) var saves = 0
        let log: EventLog?

        init(log: EventLog? = nil) { self.log = log }

        func failLoads(_ count: Int) { failingLoads = count }
        func failSaves(_ count: Int) { failingSaves = count }
        func failClears(_ count: Int) { failingClears = count }
        /// What the store holds, read around the failures.
        func held() async -> StoredCredentials? { await inner.load() }

        func load() async throws -> StoredCredentials? {
            if failingLoads > 0 {
                failingLoads -= 1
                throw Refused()
            }
            return await inner.load()
        }
        func save(_ credentials: StoredCredentials) async throws {
            if failingSaves > 0 {
                failingSaves -= 1
                throw Refused()
            }
            saves += 1
            await inner.save(credentials)
            await log?.add("save")
        }
        func clear() async throws {
            if failingClears > 0 {
                failingClears -= 1
                throw Refused()
            }
            await inner.clear()
        }
        func withExclusiveAccess<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
            try await inner.withExclusiveAccess(body)
        }
    }

    actor EventLog {
        private(set) var events: [String] = []
        func add(_ event: String) { events.append(event) }
    }

    /// Background work that records when it begins and ends, as UIKit's background task would.
    struct RecordingBackgroundWork: BackgroundWork {
        let log: EventLog
        func run<T: Sendable>(named name: String, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
            await log.add("begin \(name)")
            do {
                let value = try await work()
                await log.add("end")
                return value
            } catch {
                await log.add("end")
                throw error
            }
        }
    }

    // MARK: 1. A lost refresh answer

    @Test("a refresh holds background work from before its request until its answer is saved")
    func refreshHoldsBackgroundWork() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let log = EventLog()
            let gate = GateTransport()
            let client = Self.client(
                stack, store: FlakyStore(log: log), gate: gate, background: RecordingBackgroundWork(log: log))
            _ = try await client.signIn(with: .accessToken(try await stack.facebookToken()))
            #expect(await log.events == ["save"])
            await gate.hold(SDKLifecycleTests.token)
            let refresh = Task { try await client.refresh() }
            await gate.waitUntilHeld(SDKLifecycleTests.token)
            #expect(await log.events == ["save", "begin Latchkey session refresh"])
            await gate.release(SDKLifecycleTests.token)
            _ = try await refresh.value
            #expect(await log.events == ["save", "begin Latchkey session refresh", "save", "end"])
        }
    }

    @Test("an app killed before saving a refresh answer relaunches with the spent token and stays signed in")
    func lostAnswerSurvivesRelaunch() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let store = FlakyStore()
            let first = Self.client(stack, store: store)
            let user = try await first.signIn(with: .accessToken(try await stack.facebookToken())).user
            let spent = try #require(await store.held()?.refreshToken)
            // The refresh rotates on the server; every save of its answer fails (the app is killed).
            await store.failSaves(SDKRealPhoneTests.saveAttempts)
            stack.clock.advance(901)
            let rotated = try await first.refresh()
            #expect(rotated.refreshToken != spent)
            #expect(await store.held()?.refreshToken == spent)

            // A day later, a new launch holds only the spent token: the server answers it with the
            // successor it already issued, and the person is still signed in.
            stack.clock.advance(86_400)
            let relaunched = Self.client(stack, store: store)
            #expect(await relaunched.restoreSession())
            #expect(await relaunched.currentUser?.id == user.id)
            #expect(await store.held()?.refreshToken == rotated.refreshToken)
            #expect(try await relaunched.reloadUser().id == user.id)
        }
    }

    static let saveAttempts = 3

    // MARK: 2. A failed Keychain save

    @Test(
        "a save that fails once is retried at once (sign-in and refresh); one that keeps failing is reported and saved again on sync"
    )
    func saveRetried() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let store = FlakyStore()
            let client = Self.client(stack, store: store)
            let model = LatchkeySessionModel(client: client)
            let events = model.events()
            await model.restore()
            // The sign-in's own save fails once: tried again at once, stored, nothing reported.
            await store.failSaves(1)
            _ = try await client.signIn(with: .accessToken(try await stack.facebookToken()))
            await SDKSessionModelTests.until(model) { $0.isSignedIn }
            // Reloading the user writes behind the sign-in's save, so both have landed after it.
            _ = try await client.reloadUser()
            let held = await store.held()
            #expect(await store.saves == 2)
            #expect(held?.user == model.user && model.user != nil)
            #expect(await client.snapshot.credentialStoreError == nil)

            await store.failSaves(1)
            stack.clock.advance(901)
            let once = try await client.refresh()
            #expect(await store.held() == once)
            #expect(await client.snapshot.credentialStoreError == nil)

            await store.failSaves(SDKRealPhoneTests.saveAttempts)
            stack.clock.advance(901)
            let lost = try await client.refresh()
            #expect(await store.held() != lost)
            let failure = try #require(await client.snapshot.credentialStoreError)
            #expect(failure.code == .credentialStoreFailed)
            await SDKSessionModelTests.until(model) { $0.lastError?.code == .credentialStoreFailed }
            #expect(model.isSignedIn)
            let seen = await SDKSessionModelTests.take(4, from: events)
            #expect(seen.contains(.failed(failure)), "\(seen)")

            // The app comes back to the foreground: the save is tried again, and the failure clears.
            await model.sceneBecameActive()
            #expect(await store.held() == lost)
            #expect(await client.snapshot.credentialStoreError == nil)

            // A sign-out whose clear fails once is tried again: no session is left for the next
            // launch to restore.
            await store.failClears(1)
            await model.signOut()
            #expect(await store.held() == nil)
        }
    }

    // MARK: 3. A store not readable yet

    @Test(
        "a store unreadable at launch is 'not readable yet', never signed out; it is read again when data is available")
    func unreadableAtLaunch() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let store = FlakyStore()
            let user = try await Self.client(stack, store: store)
                .signIn(with: .accessToken(try await stack.facebookToken())).user

            // A reboot: the Keychain cannot be read before the first unlock.
            await store.failLoads(1)
            let client = Self.client(stack, store: store)
            let model = LatchkeySessionModel(client: client)
            await model.restore()
            #expect(model.state == .storeUnreadable && model.isSessionUnreadable)
            #expect(!model.hasRestored && !model.isSignedIn && model.buttonState == .working)
            #expect(await store.held()?.user.id == user.id, "nothing was cleared")

            // The person unlocks the phone.
            await model.protectedDataBecameAvailable()
            #expect(model.hasRestored && model.isSignedIn && model.user?.id == user.id)
            #expect(model.buttonState == .signedIn)

            // Unreadable, then readable with nobody stored: signed out, known now.
            let empty = FlakyStore()
            await empty.failLoads(1)
            let other = LatchkeySessionModel(client: Self.client(stack, store: empty))
            await other.restore()
            #expect(other.isSessionUnreadable)
            await other.sceneBecameActive()
            #expect(other.hasRestored && other.state == .created && other.buttonState == .signedOut)
        }
    }

    // MARK: 4. Easy Login abandoned in an outside browser

    @Test("an Easy Login abandoned in Safari stops blocking the button on foreground, and its redirect still works")
    func abandonedEasyLogin() async throws {
        try await Stack.run(browsable: true) { @MainActor (stack: Stack) async throws in
            let client = Self.client(stack, store: InMemoryCredentialStore())
            let model = LatchkeySessionModel(client: client)
            await model.restore()
            let url = try await client.makeEasyLoginURL()
            await SDKSessionModelTests.until(model) { $0.buttonState == .working }
            // Back from Safari without a redirect.
            await model.sceneBecameActive()
            #expect(model.buttonState == .signedOut)
            // The person finishes in Safari after all: the attempt was kept.
            let redirect = try await SDKEasyLoginTests.browse(url, stack)
            #expect(await model.handleOpenURL(redirect))
            #expect(model.isSignedIn && model.state == .open && model.lastError == nil)

            // Cancelled through the model: a late redirect is refused, nothing is signed in.
            await model.signOut()
            let second = try await client.makeEasyLoginURL()
            await model.cancelEasyLogin()
            #expect(model.buttonState == .signedOut)
            let late = try await SDKEasyLoginTests.browse(second, stack)
            #expect(await Self.failure { try await client.handleOpenURL(late) } == .noPendingLogin)
            #expect(!model.isSignedIn)
        }
    }

    // MARK: 5. An extension sharing the session

    @Test("an extension signing someone else in: the app adopts the newer session on foreground, not a sign-out")
    func extensionSignsInSomeoneElse() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let items = SharedItems()
            let app = Self.client(stack, store: SecureItemCredentialStore(items: items))
            let model = LatchkeySessionModel(client: app)
            await model.restore()
            _ = try await app.signIn(with: .accessToken(try await stack.facebookToken("alice")))
            let widget = Self.client(stack, store: SecureItemCredentialStore(items: items))
            stack.clock.advance(1)
            let bob = try await widget.signIn(with: .accessToken(try await stack.facebookToken("bob"))).user

            await model.sceneBecameActive()
            #expect(model.isSignedIn && model.user?.id == bob.id && model.state == .open)
            #expect(try await app.reloadUser().id == bob.id)
        }
    }

    @Test("a refresh another client won moments ago is superseded: the app takes the newer tokens, still signed in")
    func supersededRefresh() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let items = SharedItems()
            let appStore = FlakyStore()
            let app = Self.client(stack, store: SharedView(items: items, flaky: appStore))
            let user = try await app.signIn(with: .accessToken(try await stack.facebookToken())).user
            let widget = Self.client(stack, store: SecureItemCredentialStore(items: items))
            #expect(await widget.restoreSession())
            // The widget refreshes twice (using its successor); the app, whose read of the store
            // fails just then, still presents the first token.
            stack.clock.advance(901)
            _ = try await widget.refresh()
            let newest = try await widget.refresh()
            await appStore.failLoads(1)
            let adopted = try await app.refresh()
            #expect(adopted.refreshToken == newest.refreshToken)
            #expect(await app.authState.isOpen)
            #expect(try await app.reloadUser().id == user.id)
            #expect(try await widget.reloadUser().id == user.id)
        }
    }

    /// A shared Keychain item seen through a store whose reads can fail.
    struct SharedView: CredentialStore {
        let items: SharedItems
        let flaky: FlakyStore
        var shared: SecureItemCredentialStore { SecureItemCredentialStore(items: items) }
        func load() async throws -> StoredCredentials? {
            _ = try await flaky.load()  // fails when told to
            return try await shared.load()
        }
        func save(_ credentials: StoredCredentials) async throws { try await shared.save(credentials) }
        func clear() async throws { try await shared.clear() }
    }

    // MARK: 6. Two buttons

    @Test("two buttons over one model: a failure reaches the button that asked, and the app-wide stream, only")
    func eventsScopedToTheirButton() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let model = LatchkeySessionModel(client: Self.client(stack, store: InMemoryCredentialStore()))
            await model.restore()
            let (left, right) = (LatchkeyActionID(), LatchkeyActionID())
            let leftEvents = model.events(for: left)
            let rightEvents = model.events(for: right)
            let everything = model.events()
            await model.toggle(
                signingInWith: SDKSessionModelTests.facebook(stack, .noTokens), action: left)
            let failure = try #require(model.lastError)
            // The right button then signs in: both see the faces, only the left saw the failure.
            await model.toggle(signingInWith: SDKSessionModelTests.facebook(stack), action: right)
            #expect(model.isSignedIn)
            let leftSaw = await SDKSessionModelTests.take(4, from: leftEvents)
            let rightSaw = await SDKSessionModelTests.take(3, from: rightEvents)
            let allSaw = await SDKSessionModelTests.take(4, from: everything)
            #expect(leftSaw.first == .showingSignedOutUser && leftSaw.contains(.failed(failure)), "\(leftSaw)")
            #expect(!rightSaw.contains { if case .failed = $0 { true } else { false } }, "\(rightSaw)")
            #expect(rightSaw.contains(.showingSignedInUser), "\(rightSaw)")
            #expect(allSaw.contains(.failed(failure)), "\(allSaw)")
        }
    }

    static func failure<T>(_ work: @escaping @Sendable () async throws -> T) async -> LatchkeyError.Code? {
        await SDKLifecycleTests.failure(work)
    }
}
