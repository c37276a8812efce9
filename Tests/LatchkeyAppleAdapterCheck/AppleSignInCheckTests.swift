// The Sign in with Apple adapter (AppleSignInPresenter, LatchkeyAppleSignInButton and what they share)
// compiled against the AuthenticationServices stand-in, and its mapping of Apple's answers checked.
// The stand-in's controller answers every request as cancelled and its button never runs: that the
// real sheet presents and answers as documented is verified only on an Apple platform.
import AuthenticationServices
import Foundation
import LatchkeyCore
import SwiftUI
import Synchronization
import Testing

@Suite("Sign in with Apple adapter, compiled against stand-ins")
struct AppleSignInCheckTests {
    static func authorization(
        identityToken: String? = "header.claims.signature", authorizationCode: String? = "code-1",
        fullName: PersonNameComponents? = nil
    ) -> ASAuthorization {
        let credential = ASAuthorizationAppleIDCredential(
            user: "001234.abcdef.1234", identityToken: identityToken.map { Data($0.utf8) },
            authorizationCode: authorizationCode.map { Data($0.utf8) }, fullName: fullName,
            email: "x@privaterelay.appleid.com")
        return ASAuthorization(provider: ASAuthorizationAppleIDProvider(), credential: credential)
    }

    @Test("the presenter asks the controller and reads its cancel as a cancel; the client makes it user_cancelled")
    @MainActor
    func presenterCancel() async throws {
        let presenter = AppleSignInPresenter(anchor: ASPresentationAnchor())
        let provider: any AppleSignInProvider = presenter
        #expect(try await provider.signIn(nonceSHA256: "hash", scopes: [.email]) == .cancelled)
        let transport = RecordingTransport()
        let client = LatchkeyClient(configuration: Self.configuration(transport))
        let error = await #expect(throws: LatchkeyError.self) { try await presenter.signIn(client: client) }
        #expect(error?.code == .userCancelled)
        #expect(transport.bodies.isEmpty)
        _ = SignInMethod.apple(presenter, scopes: [.fullName])
    }

    @Test("an Apple ID credential becomes the core's: tokens as text, the name's parts, the user and email")
    func credentialMapping() throws {
        var name = PersonNameComponents()
        name.givenName = "Ada"
        name.familyName = "Lovelace"
        let result = try AppleSignInResult(.success(Self.authorization(fullName: name)))
        #expect(
            result
                == .authorized(
                    AppleIDCredential(
                        identityToken: "header.claims.signature", authorizationCode: "code-1",
                        user: "001234.abcdef.1234",
                        givenName: "Ada", familyName: "Lovelace", email: "x@privaterelay.appleid.com")))
    }

    @Test("a cancel is a cancel; other errors stay themselves; a credential without a token is apple_login_failed")
    func outcomes() throws {
        #expect(try AppleSignInResult(.failure(ASAuthorizationError(.canceled))) == .cancelled)
        #expect(throws: ASAuthorizationError(.failed)) {
            try AppleSignInResult(.failure(ASAuthorizationError(.failed)))
        }
        for authorization in [Self.authorization(identityToken: nil), Self.authorization(authorizationCode: nil)] {
            let error = #expect(throws: LatchkeyError.self) { try AppleSignInResult(.success(authorization)) }
            #expect(error?.code == .appleLoginFailed)
        }
    }

    @Test("scopes reach Apple in a fixed order")
    func scopes() {
        #expect(Set<AppleScope>([.email, .fullName]).authorizationScopes == [.fullName, .email])
        #expect(Set<AppleScope>([.email]).authorizationScopes == [.email])
        #expect(Set<AppleScope>().authorizationScopes.isEmpty)
    }

    @Test("the button's request carries the nonce's hash, and its answer signs in with the raw nonce")
    @MainActor
    func buttonNonce() async throws {
        let transport = RecordingTransport()
        let session = LatchkeySessionModel(client: LatchkeyClient(configuration: Self.configuration(transport)))
        _ = LatchkeyAppleSignInButton(session: session, label: .continue, onEvent: { _ in }).body
        let requests = AppleSignInButtonRequests()
        let request = ASAuthorizationAppleIDProvider().createRequest()
        requests.prepare(request, scopes: [.fullName, .email])
        #expect(request.requestedScopes == [.fullName, .email])
        let hash = try #require(request.nonce)
        await session.signIn(requests.method(answering: .success(Self.authorization())))
        #expect(session.isSignedIn)
        let body = try #require(transport.bodies.first)
        let raw = try #require(body["nonce"])
        #expect(raw != hash && Nonce(raw: raw).sha256 == hash)
        #expect(body["idToken"] == "header.claims.signature")
    }

    @Test("the button's cancel is user_cancelled, reported to its events, not lastError")
    @MainActor
    func buttonCancel() async throws {
        let transport = RecordingTransport()
        let session = LatchkeySessionModel(client: LatchkeyClient(configuration: Self.configuration(transport)))
        let requests = AppleSignInButtonRequests()
        requests.prepare(ASAuthorizationAppleIDProvider().createRequest(), scopes: [])
        let action = LatchkeyActionID()
        var events = session.events(for: action).makeAsyncIterator()
        await session.signIn(requests.method(answering: .failure(ASAuthorizationError(.canceled))), action: action)
        #expect(session.lastError == nil)
        // Emitted before signIn returned; nothing else comes first (the face is not decided before a restore).
        guard case .failed(let error) = await events.next() else {
            Issue.record("the first event must be the failure")
            return
        }
        #expect(error.code == .userCancelled)
        #expect(transport.bodies.isEmpty)
    }

    static func configuration(_ transport: RecordingTransport) -> LatchkeyConfiguration {
        LatchkeyConfiguration(
            serverURL: URL(string: "https://auth.example.com")!, facebookAppID: "1234567890",
            credentialStore: InMemoryCredentialStore(), transport: transport)
    }
}

/// Answers every sign-in with a session, keeping each request's JSON body.
final class RecordingTransport: LatchkeyTransport {
    private let recorded = Mutex<[[String: String]]>([])
    /// The string fields of each JSON body sent.
    var bodies: [[String: String]] { recorded.withLock { $0 } }

    func send(_ request: LatchkeyHTTPRequest) async throws -> LatchkeyHTTPResponse {
        if let body = request.body, let json = try JSONSerialization.jsonObject(with: body) as? [String: Any] {
            recorded.withLock { $0.append(json.compactMapValues { $0 as? String }) }
        }
        let answer = SignInBody(
            user: UserBody(id: "u1", properties: [:], identities: [], createdAt: 0), isNewUser: true,
            grantedPermissions: [], declinedPermissions: [],
            session: SessionBody(
                accessToken: "access", expiresIn: 900, refreshToken: "refresh", refreshTokenExpiresIn: 86400))
        return LatchkeyHTTPResponse(status: 200, body: try JSONEncoder().encode(answer))
    }
}
