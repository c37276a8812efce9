// The Apple adapter (the files under Apple/, a link to Sources/Latchkey/Apple) and the sample app's
// sources (SampleApp/, a link to Examples/LatchkeySample's App folder) compiled against the
// compile-only stand-ins of Security, AuthenticationServices, SwiftUI, UIKit and
// AppTrackingTransparency: building this target is the check.
// These tests only show the adapter's public surface is what apps use; the stand-ins do nothing, so
// nothing here says the real Keychain or the real sheet behave as documented.
import AppTrackingTransparency
import AuthenticationServices
import Foundation
import LatchkeyCore
import SwiftUI
import Testing

@Suite("Apple adapter, compiled against stand-ins")
struct AppleAdapterCheckTests {
    @Test("KeychainItemStore keeps its settings; accessibility defaults to after first unlock, this device")
    func keychainItemStore() {
        let items = KeychainItemStore(service: "com.example.app.latchkey", accessGroup: "TEAMID.com.example.shared")
        #expect(items.service == "com.example.app.latchkey")
        #expect(items.accessGroup == "TEAMID.com.example.shared")
        #expect(items.accessibility == .afterFirstUnlockThisDeviceOnly)
        #expect(KeychainItemStore(service: "s", accessibility: .whenUnlocked).accessibility == .whenUnlocked)
    }

    @Test(".keychain(service:) is a SecureItemCredentialStore, where an app passes a credential store")
    func keychainCredentialStore() {
        let store: any CredentialStore = .keychain(service: "com.example.app")
        #expect(store is SecureItemCredentialStore)
        let configuration = LatchkeyConfiguration(
            serverURL: URL(string: "https://auth.example.com")!, facebookAppID: "1234567890",
            credentialStore: .keychain(service: "com.example.app", accessGroup: nil, lockFileURL: nil),
            transport: UnusedTransport())
        #expect(configuration.credentialStore is SecureItemCredentialStore)
    }

    @Test("A sheet that does not start ends the attempt with invalid_configuration, once")
    @MainActor
    func sheetThatDoesNotStart() async {
        let presenter = EasyLoginPresenter(anchor: ASPresentationAnchor())
        let session: any WebAuthenticator = presenter
        let error = await #expect(throws: LatchkeyError.self) {
            _ = try await session.authenticate(
                url: URL(string: "https://auth.example.com/v1/oauth/authorize")!, callback: .customScheme("myapp"),
                prefersEphemeral: false)
        }
        #expect(error?.code == .invalidConfiguration)
    }
}

extension AppleAdapterCheckTests {
    @Test("ATT's statuses map onto the core's choice; only authorized means classic login")
    func trackingAuthorization() {
        let statuses: [ATTrackingManager.AuthorizationStatus] = [.authorized, .denied, .restricted, .notDetermined]
        #expect(statuses.map(TrackingAuthorization.init) == [.authorized, .denied, .restricted, .notDetermined])
        #expect(
            statuses.map { TrackingAuthorization($0).facebookTracking } == [.enabled, .limited, .limited, .limited])
        #expect(TrackingAuthorization.current == .notDetermined)  // the stand-in's status
    }

    @Test("SwiftUI's web authentication session: a closed sheet is user_cancelled")
    @MainActor
    func swiftUIWebAuthenticator() async {
        let authenticator: any WebAuthenticator = SwiftUIWebAuthenticator(WebAuthenticationSession())
        for callback in [
            WebAuthenticationCallback.customScheme("myapp"), .https(host: "app.example.com", path: "/auth"),
        ] {
            let error = await #expect(throws: LatchkeyError.self) {
                _ = try await authenticator.authenticate(
                    url: URL(string: "https://auth.example.com/v1/oauth/authorize")!, callback: callback,
                    prefersEphemeral: true)
            }
            #expect(error?.code == .userCancelled)
        }
        _ = SignInMethod.easyLogin(WebAuthenticationSession(), permissions: ["email"])
    }

    @Test("the login button and the profile picture build their bodies over the session model")
    @MainActor
    func views() {
        let client = LatchkeyClient(
            configuration: LatchkeyConfiguration(
                serverURL: URL(string: "https://auth.example.com")!, facebookAppID: "1234567890",
                credentialStore: InMemoryCredentialStore(), transport: UnusedTransport()))
        let session = LatchkeySessionModel(client: client)
        let button = LatchkeyLoginButton(
            session: session, signingInWith: .custom { _ in }, onEvent: { event in _ = event })
        _ = button.body
        _ = LatchkeyProfilePicture(session: session, cropping: .original).body
        _ = LatchkeyProfilePicture(session: session).body
    }
}

/// A transport the configuration test never calls.
private struct UnusedTransport: LatchkeyTransport {
    func send(_ request: LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse {
        throw CancellationError()
    }
}
