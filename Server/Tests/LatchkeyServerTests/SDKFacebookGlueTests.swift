import Foundation
import Latchkey
import LatchkeyAPI
import Synchronization
import Testing

/// The configurations a login manager was asked for.
final class AskedConfigurations: Sendable {
    private let asked = Mutex<[FacebookLoginConfiguration]>([])
    func append(_ configuration: FacebookLoginConfiguration) { asked.withLock { $0.append(configuration) } }
    var all: [FacebookLoginConfiguration] { asked.withLock { $0 } }
}

/// A stand-in for the Facebook SDK's `LoginManager`, answering with tokens the emulator mints, as
/// Facebook would: classic login gives an access token (and an id token), Limited Login an id token
/// bound to the nonce it was given.
struct EmulatorLoginManager: FacebookLoginProvider {
    enum Behaviour: Sendable {
        case normal
        case cancel
        /// Tracking denied: the Limited Login shim's JWT-shaped "access token" beside the id token.
        case limitedShimToken
        case declining(Set<String>)
        case noTokens
    }

    let stack: Stack
    var user = "alice"
    var behaviour = Behaviour.normal
    /// The configurations asked for, to check what the SDK asked Facebook.
    let asked = AskedConfigurations()

    func logIn(configuration: FacebookLoginConfiguration) async throws -> FacebookLoginResult {
        asked.append(configuration)
        var declined: Set<String> = []
        switch behaviour {
        case .cancel: return .cancelled
        case .noTokens: return FacebookLoginResult(grantedPermissions: ["public_profile"])
        case .declining(let permissions): declined = permissions
        case .normal, .limitedShimToken: break
        }
        let granted = configuration.permissions.subtracting(declined).union(["public_profile"])
        let idToken = try await stack.idToken(user, nonce: configuration.nonce, scopes: granted.sorted())
        switch configuration.tracking {
        case .enabled:
            let token = try await stack.facebookToken(user, scopes: granted.sorted())
            return FacebookLoginResult(
                accessToken: token, authenticationToken: idToken, grantedPermissions: granted,
                declinedPermissions: declined)
        case .limited:
            let shim: String? = {
                if case .limitedShimToken = behaviour { return "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln" }
                return nil
            }()
            return FacebookLoginResult(
                accessToken: shim, authenticationToken: idToken, grantedPermissions: granted,
                declinedPermissions: declined)
        }
    }
}

@Suite("SDK beside the Facebook SDK")
struct SDKFacebookGlueTests {
    static func client(_ stack: Stack) -> LatchkeyClient {
        LatchkeyClient(
            configuration: LatchkeyConfiguration(
                serverURL: stack.serverURL, facebookAppID: Demo.appID, credentialStore: InMemoryCredentialStore(),
                transport: GateTransport(), clock: { stack.clock.now }))
    }

    @Test("tracking authorized: classic login, the access token goes to the server")
    func classic() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let manager = EmulatorLoginManager(stack: stack)
            let result = try await Self.client(stack).signInWithFacebook(
                using: manager, permissions: ["email"], tracking: .authorized)
            #expect(result.user.string("email") == "alice@example.com")
            let asked = try #require(manager.asked.all.first)
            #expect(asked.tracking == .enabled && asked.permissions == ["email"])
            #expect(result.user.identities.first?.grantedPermissions.contains("email") == true)
        }
    }

    @Test(
        "tracking not authorized: Limited Login with a fresh nonce, its SHA-256 to Facebook",
        arguments: [TrackingAuthorization.denied, .restricted, .notDetermined])
    func limited(tracking: TrackingAuthorization) async throws {
        try await Stack.run { (stack: Stack) async throws in
            let manager = EmulatorLoginManager(stack: stack, user: "bob")
            let result = try await Self.client(stack).signInWithFacebook(
                using: manager, permissions: ["email"], tracking: tracking)
            #expect(result.user.string("email") == "bob@example.com")
            let asked = try #require(manager.asked.all.first)
            #expect(asked.tracking == .limited)
            #expect(asked.nonce.count == 64)  // SHA-256 hex; the raw value never reaches Facebook
        }
    }

    @Test("tracking denied with the Limited Login shim's access token: the id token is used instead")
    func limitedShim() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let manager = EmulatorLoginManager(stack: stack, user: "carol", behaviour: .limitedShimToken)
            let result = try await Self.client(stack).signInWithFacebook(using: manager, tracking: .denied)
            #expect(result.isNewUser)
        }
    }

    @Test("a cancel is user_cancelled; no usable token is facebook_login_failed; neither signs in")
    func cancelAndNoToken() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let client = Self.client(stack)
            for (behaviour, code) in [
                (EmulatorLoginManager.Behaviour.cancel, LatchkeyError.Code.userCancelled),
                (.noTokens, .facebookLoginFailed),
            ] {
                do throws(LatchkeyError) {
                    try await client.signInWithFacebook(
                        using: EmulatorLoginManager(stack: stack, behaviour: behaviour), tracking: .authorized)
                    Issue.record("the sign-in must fail")
                } catch {
                    #expect(error.code == code)
                }
                #expect(await client.currentUser == nil)
            }
        }
    }

    @Test("permissions declined on Facebook's dialog are reported, in classic and Limited Login")
    func declined() async throws {
        try await Stack.run { (stack: Stack) async throws in
            for tracking in [TrackingAuthorization.authorized, .denied] {
                let manager = EmulatorLoginManager(stack: stack, behaviour: .declining(["email"]))
                let result = try await Self.client(stack).signInWithFacebook(
                    using: manager, permissions: ["email"], tracking: tracking)
                #expect(result.declinedPermissions.contains("email"))
                #expect(result.user.string("email") == nil)
            }
        }
    }

    @Test("a permission Facebook's SDK would refuse is refused before any login")
    func badPermission() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let manager = EmulatorLoginManager(stack: stack)
            do throws(LatchkeyError) {
                try await Self.client(stack).signInWithFacebook(
                    using: manager, permissions: ["Email"], tracking: .denied)
                Issue.record("the sign-in must fail")
            } catch {
                #expect(error.code == .invalidConfiguration)
            }
            #expect(manager.asked.all.isEmpty)
        }
    }
}
