import Foundation
import Hummingbird

/// Every HTTP endpoint: the controllers, one per concept, over their services. Routes that need
/// a signed-in person sit behind `BearerAuthentication`, so no handler authenticates by hand.
struct Routes: Sendable {
    let configuration: ServerConfiguration
    let store: any LatchkeyStore
    let signIn: SignInService
    let tokens: SessionTokens
    let easyLogin: EasyLoginService
    let origin: ServerOrigin
    /// What the server last heard from Facebook, for `/ready`.
    let health: FacebookHealth
    /// The Graph usage Facebook last reported per app, for `/ready`.
    let usage: FacebookUsageMonitor
    /// Sign in with Apple (refusing everything while it is off).
    let apple: AppleSignInService
    /// Apple's server-to-server notifications.
    let appleNotifications: AppleNotificationService
    /// What the server last heard from Apple, for `/ready`.
    let appleHealth: AppleHealth
    /// Facebook's deauthorize and data-deletion callbacks.
    let facebookCallbacks: FacebookCallbackService
    /// Abuse limits by client address.
    let limits: AbuseLimits
    let reading: RequestReading

    /// The controllers, in the order their routes are added.
    var controllers: [any Controller] {
        let tokenChecked = BearerAuthentication(
            tokens: tokens, store: store, clock: configuration.clock, strength: .signature)
        let sessionChecked = BearerAuthentication(
            tokens: tokens, store: store, clock: configuration.clock, strength: .activeSession)
        let identities = IdentityService(
            configuration: configuration, store: store, signIn: signIn, tokens: tokens, limits: limits)
        return [
            HealthController(store: store, tokens: tokens, health: health, usage: usage, apple: appleHealth),
            DiscoveryController(tokens: tokens, origin: origin),
            EasyLoginController(easyLogin: easyLogin, limits: limits, reading: reading),
            SignInController(
                signIn: signIn, apple: apple, identities: identities, tokens: tokens, limits: limits, reading: reading),
            AppleNotificationsController(
                apple: apple, notifications: appleNotifications, limits: limits, reading: reading),
            FacebookCallbacksController(callbacks: facebookCallbacks, store: store, limits: limits, reading: reading),
            FactorsController(
                factors: signIn.secondFactor, limits: limits, reading: reading, sessionChecked: sessionChecked),
            IdentitiesController(
                identities: identities, apple: apple, limits: limits, reading: reading, sessionChecked: sessionChecked),
            SessionsController(
                sessions: SessionService(configuration: configuration, store: store, tokens: tokens, limits: limits),
                easyLogin: easyLogin, limits: limits, reading: reading, sessionChecked: sessionChecked),
            UsersController(
                users: UserService(configuration: configuration, store: store),
                events: SecurityEventsService(store: store), reading: reading,
                tokenChecked: tokenChecked, sessionChecked: sessionChecked),
        ]
    }

    func register(on router: Router<LatchkeyRequestContext>) {
        for controller in controllers { controller.register(on: router) }
    }
}
