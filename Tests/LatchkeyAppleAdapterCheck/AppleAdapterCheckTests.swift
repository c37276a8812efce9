// The Apple adapter (the files under Apple/, a link to Sources/Latchkey/Apple) compiled against the
// compile-only stand-ins of Security and AuthenticationServices: building this target is the check.
// These tests only show the adapter's public surface is what apps use; the stand-ins do nothing, so
// nothing here says the real Keychain or the real sheet behave as documented.
import AuthenticationServices
import Foundation
import LatchkeyCore
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

/// A transport the configuration test never calls.
private struct UnusedTransport: LatchkeyTransport {
    func send(_ request: LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse {
        throw CancellationError()
    }
}
