import Foundation
import Latchkey
import Observation
import Synchronization
import Testing

/// The SwiftUI session model, on Linux: what a view reads (state, user, button face, picture) and
/// what a login button reports (FBLoginView's delegate events), against the live server and emulator.
// A hang guard, not a timing: a full pass on two cores, with every suite at once, has taken a test
// here past one minute.
@Suite("SDK session model and login button", .timeLimit(.minutes(3)))
@MainActor
struct SDKSessionModelTests {
    static func client(
        _ stack: Stack, store: any CredentialStore = InMemoryCredentialStore(), gate: GateTransport = GateTransport()
    )
        -> LatchkeyClient
    {
        LatchkeyClient(
            configuration: LatchkeyConfiguration(
                serverURL: stack.serverURL, facebookAppID: Demo.appID, credentialStore: store, transport: gate,
                clock: { stack.clock.now }, oauthClientID: Demo.clientID, redirectURI: Demo.appRedirect))
    }

    static func facebook(_ stack: Stack, _ behaviour: EmulatorLoginManager.Behaviour = .normal) -> SignInMethod {
        .facebook(
            EmulatorLoginManager(stack: stack, behaviour: behaviour), permissions: ["email"],
            tracking: { .authorized })
    }

    /// Waits, without sleeping, until `condition` holds: re-checked on each change Observation reports.
    static func until(_ model: LatchkeySessionModel, _ condition: @MainActor (LatchkeySessionModel) -> Bool) async {
        while !condition(model) {
            await withCheckedContinuation { continuation in
                withObservationTracking {
                    _ = condition(model)
                } onChange: {
                    continuation.resume()
                }
            }
        }
    }

    /// The next `count` events of a stream.
    static func take(_ count: Int, from events: AsyncStream<LatchkeySessionEvent>) async -> [LatchkeySessionEvent] {
        var iterator = events.makeAsyncIterator()
        var taken: [LatchkeySessionEvent] = []
        while taken.count < count, let event = await iterator.next() { taken.append(event) }
        return taken
    }

    /// Whether reading `property` under Observation is told of a change while `work` runs.
    static func observesChange(
        _ model: LatchkeySessionModel, of property: (LatchkeySessionModel) -> Void, during work: () async -> Void
    ) async -> Bool {
        let fired = Mutex(false)
        withObservationTracking {
            property(model)
        } onChange: {
            fired.withLock { $0 = true }
        }
        await work()
        return fired.withLock { $0 }
    }

    @Test("Observation sees each published property change (reported by hand, so the model also runs before iOS 17)")
    func observationByHand() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let model = LatchkeySessionModel(client: Self.client(stack))
            #expect(await Self.observesChange(model, of: { _ = $0.hasRestored }, during: { await model.restore() }))
            #expect(
                await Self.observesChange(model, of: { _ = $0.actionsInFlight }) {
                    await model.signIn(Self.facebook(stack, .noTokens))
                })
            #expect(await Self.observesChange(model, of: { _ = $0.lastError }) { model.lastError = nil })
            #expect(await Self.observesChange(model, of: { _ = $0.user }) { await model.signIn(Self.facebook(stack)) })
            #expect(await Self.observesChange(model, of: { _ = $0.state }) { await model.signOut() })
            // A read of one property is not told of changes to the others.
            #expect(await !Self.observesChange(model, of: { _ = $0.hasRestored }) { model.lastError = nil })
        }
    }

    @Test("launch without a session: working until the restore says signed out, then the sign-in face")
    func launchSignedOut() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let model = LatchkeySessionModel(client: Self.client(stack))
            let events = model.events()
            #expect(model.buttonState == .working && !model.hasRestored && model.user == nil)
            await model.restore()
            #expect(model.hasRestored && !model.isSignedIn && model.buttonState == .signedOut)
            #expect(await Self.take(1, from: events) == [.showingSignedOutUser])
        }
    }

    @Test("the button signs in: working while under way, then the user, the picture and the delegate's events in order")
    func buttonSignsIn() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let gate = GateTransport()
            let model = LatchkeySessionModel(client: Self.client(stack, gate: gate))
            await model.restore()
            let events = model.events()
            await gate.hold("/v1/auth/facebook")
            let tap = Task { await model.toggle(signingInWith: Self.facebook(stack)) }
            await gate.waitUntilHeld("/v1/auth/facebook")
            #expect(model.buttonState == .working && model.isWorking)
            // A second tap while the first is under way starts nothing.
            await model.toggle(signingInWith: Self.facebook(stack))
            #expect(await gate.count("/v1/auth/facebook") == 1)
            await gate.release("/v1/auth/facebook")
            await tap.value

            #expect(model.isSignedIn && model.state == .open && model.buttonState == .signedIn)
            let user = try #require(model.user)
            #expect(user.string("email") == "alice@example.com")
            #expect(model.pictureURL?.absoluteString.hasPrefix(stack.emulatorURL) == true)
            #expect(model.lastError == nil)
            // The stream starts with the face shown when it was made, as FBLoginView did when added.
            #expect(
                await Self.take(3, from: events) == [.showingSignedOutUser, .showingSignedInUser, .fetchedUser(user)])
        }
    }

    @Test("tapping when signed in signs out: the sign-in face, no user, no picture")
    func buttonSignsOut() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let model = LatchkeySessionModel(client: Self.client(stack))
            await model.restore()
            await model.signIn(Self.facebook(stack))
            let events = model.events()
            let user = try #require(model.user)
            await model.toggle(signingInWith: Self.facebook(stack))
            #expect(!model.isSignedIn && model.state == .closed && model.user == nil && model.pictureURL == nil)
            #expect(model.buttonState == .signedOut)
            #expect(
                await Self.take(3, from: events) == [.showingSignedInUser, .fetchedUser(user), .showingSignedOutUser])
        }
    }

    @Test("a failed sign-in is an error event and lastError; a person closing the dialog is an event only")
    func failures() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let model = LatchkeySessionModel(client: Self.client(stack))
            await model.restore()
            let events = model.events()

            await model.signIn(Self.facebook(stack, .cancel))
            #expect(model.lastError == nil && !model.isSignedIn && model.buttonState == .signedOut)
            guard case .failed(let cancelled)? = await Self.take(2, from: events).last else {
                Issue.record("a cancel is reported")
                return
            }
            #expect(cancelled.code == .userCancelled && !cancelled.shouldNotifyUser)

            await model.signIn(Self.facebook(stack, .noTokens))
            let failure = try #require(model.lastError)
            #expect(await Self.take(1, from: events) == [.failed(failure)])
            #expect(!model.isSignedIn && model.buttonState == .signedOut)

            // The next action clears the error.
            await model.signIn(Self.facebook(stack))
            #expect(model.lastError == nil && model.isSignedIn)
        }
    }

    @Test("two models over one client show the same session; a sign-out through the client reaches both")
    func twoObservers() async throws {
        try await Stack.run({ $0.users.writableProperties = ["nickname"] }) { @MainActor (stack: Stack) async throws in
            let client = Self.client(stack)
            let first = LatchkeySessionModel(client: client)
            let second = LatchkeySessionModel(client: client)
            await first.restore()
            await second.restore()
            await first.signIn(Self.facebook(stack))
            await Self.until(second) { $0.isSignedIn }
            #expect(second.user == first.user && second.state == first.state)

            // A reload changes the user without a state change: both see it, the button reports it.
            let events = second.events()
            _ = try await client.updateUser(properties: ["nickname": "Al"])
            await Self.until(second) { $0.user?.string("nickname") == "Al" }
            let reloaded = try #require(second.user)
            #expect(await Self.take(3, from: events).last == .fetchedUser(reloaded))

            await client.signOut()
            await Self.until(first) { !$0.isSignedIn }
            await Self.until(second) { !$0.isSignedIn }
            #expect(first.user == nil && second.user == nil && first.state == .closed && second.state == .closed)
        }
    }

    @Test("an offline launch keeps the stored user shown, then the server's confirmation opens the session")
    func offlineLaunch() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let store = InMemoryCredentialStore()
            let signedIn = LatchkeySessionModel(client: Self.client(stack, store: store))
            await signedIn.signIn(Self.facebook(stack))
            let user = try #require(signedIn.user)
            stack.clock.advance(3600)  // the access token expired while the app was not running

            let gate = GateTransport()
            await gate.failNext("/v1/oauth/token")
            let model = LatchkeySessionModel(client: Self.client(stack, store: store, gate: gate))
            let events = model.events()
            await model.restore()
            #expect(model.state == .createdTokenLoaded && model.user == user && model.isSignedIn)
            #expect(model.buttonState == .signedIn && model.lastError == nil)
            #expect(await Self.take(2, from: events) == [.showingSignedInUser, .fetchedUser(user)])

            // Back online: the same person, now confirmed; no second "signed in" event (the next
            // event is the sign-out's).
            await model.restore()
            #expect(model.state == .open && model.user?.id == user.id)
            await model.signOut()
            #expect(await Self.take(1, from: events) == [.showingSignedOutUser])
        }
    }

    @Test("a sign-out during a sign-in: the sign-in ends quietly, the person is shown signed out")
    func signOutDuringSignIn() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let gate = GateTransport()
            let model = LatchkeySessionModel(client: Self.client(stack, gate: gate))
            await model.restore()
            await model.signIn(Self.facebook(stack))
            await gate.hold("/v1/auth/facebook")
            let switching = Task { await model.signIn(Self.facebook(stack)) }
            await gate.waitUntilHeld("/v1/auth/facebook")
            await model.signOut()
            await gate.release("/v1/auth/facebook")
            await switching.value
            #expect(!model.isSignedIn && model.user == nil && model.state == .closed)
            #expect(model.lastError == nil && model.buttonState == .signedOut && model.actionsInFlight == 0)
        }
    }

    @Test("one account replacing another keeps the signed-in face and reports the new user")
    func accountSwitch() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let model = LatchkeySessionModel(client: Self.client(stack))
            await model.restore()
            await model.signIn(Self.facebook(stack))
            let alice = try #require(model.user)
            let events = model.events()
            await model.signIn(
                .facebook(
                    EmulatorLoginManager(stack: stack, user: "bob"), permissions: ["email"], tracking: { .authorized }))
            let bob = try #require(model.user)
            #expect(bob.id != alice.id && model.isSignedIn)
            #expect(await Self.take(3, from: events) == [.showingSignedInUser, .fetchedUser(alice), .fetchedUser(bob)])
            // Signing out forgets who was reported: signing Bob in again reports him again.
            await model.signOut()
            await model.signIn(
                .facebook(
                    EmulatorLoginManager(stack: stack, user: "bob"), permissions: ["email"], tracking: { .authorized }))
            #expect(
                await Self.take(3, from: events) == [.showingSignedOutUser, .showingSignedInUser, .fetchedUser(bob)])
        }
    }

    @Test("a link to the redirect URI that is no attempt's is ignored: no error, nothing changed")
    func forgedRedirect() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let model = LatchkeySessionModel(client: Self.client(stack))
            await model.restore()
            await model.signIn(Self.facebook(stack, .noTokens))
            let failure = try #require(model.lastError)
            let events = model.events()
            // At launch any link to the redirect URI may be a relaunch's redirect, so it is looked at.
            #expect(await model.handleOpenURL(URL(string: Demo.appRedirect + "?code=stolen&state=forged")!))
            #expect(model.lastError == failure && !model.isSignedIn && model.actionsInFlight == 0)
            await model.signIn(Self.facebook(stack))
            // The forged link added no event between the replayed face and the sign-in.
            #expect(await Self.take(2, from: events) == [.showingSignedOutUser, .showingSignedInUser])
        }
    }

    @Test("a redirect that is not Easy Login's is left to the app; the model does not keep itself alive")
    func openURLAndLifetime() async throws {
        try await Stack.run { @MainActor (stack: Stack) async throws in
            let client = Self.client(stack)
            weak var released: LatchkeySessionModel?
            do {
                let model = LatchkeySessionModel(client: client)
                #expect(await !model.handleOpenURL(URL(string: "https://example.com/other")!))
                await model.restore()
                released = model
            }
            #expect(released == nil)
        }
    }
}
