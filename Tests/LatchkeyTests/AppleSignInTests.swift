import Foundation
import LatchkeyAPI
import LatchkeyCore
import Synchronization
import Testing

/// A stand-in for the app's Sign in with Apple (AppleSignInPresenter on a device): it answers as
/// scripted and keeps what it was asked.
final class StandInAppleProvider: AppleSignInProvider {
    enum Behaviour: Sendable {
        case authorize(AppleIDCredential)
        case cancel
        case fail(any Error)
    }

    /// What one sign-in asked Apple for.
    struct Asked: Sendable, Equatable {
        let nonceSHA256: String
        let scopes: Set<AppleScope>
    }

    private let behaviour: Behaviour
    private let recorded = Mutex<[Asked]>([])
    var asked: [Asked] { recorded.withLock { $0 } }

    init(_ behaviour: Behaviour = .authorize(.sample())) { self.behaviour = behaviour }

    func signIn(nonceSHA256: String, scopes: Set<AppleScope>) async throws -> AppleSignInResult {
        recorded.withLock { $0.append(Asked(nonceSHA256: nonceSHA256, scopes: scopes)) }
        switch behaviour {
        case .authorize(let credential): return .authorized(credential)
        case .cancel: return .cancelled
        case .fail(let error): throw error
        }
    }
}

extension AppleIDCredential {
    /// What Apple gives at a first authorization (with the name) or a later one (`givenName: nil`).
    static func sample(givenName: String? = "Ada", familyName: String? = "Lovelace") -> AppleIDCredential {
        AppleIDCredential(
            identityToken: "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIwMDEyMzQifQ.c2ln", authorizationCode: "c0de.1.apple",
            user: "001234.abcdef0123456789.1234", givenName: givenName, familyName: familyName,
            email: "ada@privaterelay.appleid.com")
    }
}

/// An error Apple's framework might throw.
struct AppleFrameworkError: Error, Equatable {}

@Suite("Sign in with Apple through the SDK")
struct AppleSignInTests {
    static let appleIdentity = IdentityBody(
        provider: "apple", subject: "001234.abcdef0123456789.1234", appID: "com.example.app", grantedPermissions: [])

    @Test("the raw nonce goes to the server, its SHA-256 to Apple, with the credential and the name")
    func signIn() async throws {
        let server = FakeServer(["POST /v1/auth/apple": FakeServer.signIn("u1", identities: [Self.appleIdentity])])
        let provider = StandInAppleProvider()
        let client = server.client()
        let result = try await client.signInWithApple(using: provider)
        #expect(result.user.id == "u1" && result.isNewUser)
        #expect(await client.currentUser?.id == "u1")
        #expect(await client.authState == .open)

        let asked = try #require(provider.asked.first)
        #expect(asked.scopes == [.fullName, .email])
        let sent = try #require(server.requests(to: "POST /v1/auth/apple").first)
        let body = try #require(sent.body?.objectValue)
        let raw = try #require(body["nonce"]?.stringValue)
        #expect(raw != asked.nonceSHA256 && Nonce(raw: raw).sha256 == asked.nonceSHA256)
        #expect(body["idToken"] == .string(AppleIDCredential.sample().identityToken))
        #expect(body["authorizationCode"] == "c0de.1.apple")
        #expect(body["givenName"] == "Ada" && body["familyName"] == "Lovelace")
        // The email is read from the id token by the server, and the user id is its `sub`.
        #expect(Set(body.keys) == ["idToken", "authorizationCode", "nonce", "givenName", "familyName"])
        // As a Facebook sign-in: no bearer, even with a session open (a guest links instead).
        #expect(sent.bearer == nil)
    }

    @Test("each sign-in has its own nonce")
    func freshNonces() async throws {
        let server = FakeServer(["POST /v1/auth/apple": FakeServer.signIn("u1")])
        let provider = StandInAppleProvider()
        let client = server.client()
        try await client.signInWithApple(using: provider, scopes: [.email])
        try await client.signInWithApple(using: provider, scopes: [])
        #expect(provider.asked.map(\.scopes) == [[.email], []])
        let nonces = server.requests(to: "POST /v1/auth/apple").compactMap { $0.body?["nonce"]?.stringValue }
        #expect(nonces.count == 2 && Set(nonces).count == 2)
        #expect(provider.asked.map(\.nonceSHA256) == nonces.map { Nonce(raw: $0).sha256 })
    }

    @Test(
        "the name is forwarded only when Apple shared it",
        arguments: [(String?.none, String?.none), ("", "  "), (nil, "Lovelace"), ("Ada", nil)])
    func nameOnlyWhenShared(given: String?, family: String?) async throws {
        let server = FakeServer(["POST /v1/auth/apple": FakeServer.signIn("u1")])
        let credential = AppleIDCredential.sample(givenName: given, familyName: family)
        try await server.client().signIn(with: credential, rawNonce: "raw-nonce-1")
        let body = try #require(server.requests.first?.body)
        #expect(body["nonce"] == "raw-nonce-1")
        #expect(body["givenName"] == (given == "Ada" ? "Ada" : nil))
        #expect(body["familyName"] == (family == "Lovelace" ? "Lovelace" : nil))
    }

    @Test("a cancel is user_cancelled: nothing reaches the server and nobody is signed in")
    func cancel() async throws {
        let server = FakeServer(["POST /v1/auth/apple": FakeServer.signIn("u1")])
        let client = server.client()
        let error = await #expect(throws: LatchkeyError.self) {
            try await client.signInWithApple(using: StandInAppleProvider(.cancel))
        }
        #expect(error?.code == .userCancelled && error?.category == .userCancelled)
        #expect(error?.shouldNotifyUser == false)
        #expect(server.requests.isEmpty)
        #expect(await client.currentUser == nil)
    }

    @Test("Apple's failures are apple_login_failed (keeping the cause); a cancelled task is cancelled")
    func providerFailures() async throws {
        let server = FakeServer()
        let client = server.client()
        let failed = await #expect(throws: LatchkeyError.self) {
            try await client.signInWithApple(using: StandInAppleProvider(.fail(AppleFrameworkError())))
        }
        #expect(failed?.code == .appleLoginFailed)
        #expect(failed?.underlying is AppleFrameworkError)
        let cancelled = await #expect(throws: LatchkeyError.self) {
            try await client.signInWithApple(using: StandInAppleProvider(.fail(CancellationError())))
        }
        #expect(cancelled?.code == .cancelled)
        // A provider that reports the cancel as the SDK's own error is read the same way.
        let own = LatchkeyError(code: .userCancelled, message: "closed")
        let passed = await #expect(throws: LatchkeyError.self) {
            try await client.signInWithApple(using: StandInAppleProvider(.fail(own)))
        }
        #expect(passed?.code == .userCancelled)
        #expect(server.requests.isEmpty)
    }

    @Test("a credential without a token or code is apple_login_failed before the server is asked")
    func emptyCredential() async throws {
        let server = FakeServer()
        for credential in [
            AppleIDCredential(identityToken: "", authorizationCode: "c", user: "u"),
            AppleIDCredential(identityToken: "t", authorizationCode: "", user: "u"),
        ] {
            let error = await #expect(throws: LatchkeyError.self) {
                try await server.client().signInWithApple(using: StandInAppleProvider(.authorize(credential)))
            }
            #expect(error?.code == .appleLoginFailed)
        }
        #expect(server.requests.isEmpty)
    }

    @Test(
        "the server's Apple errors reach the app with their codes and categories",
        arguments: [
            (ErrorCode.appleCodeInvalid, 400, "other"), (.appleUnavailable, 503, "transient"),
            (.nonceMismatch, 401, "reopenSession"), (.notFound, 404, "other"),
        ])
    func serverErrors(code: ErrorCode, status: Int, category: String) async throws {
        let server = FakeServer(["POST /v1/auth/apple": .error(code, status: status)])
        let client = server.client()
        let error = await #expect(throws: LatchkeyError.self) {
            try await client.signInWithApple(using: StandInAppleProvider())
        }
        #expect(error?.code == code && error?.httpStatus == status)
        #expect(error?.category.description == category)
        #expect(await client.authState == .closedLoginFailed)
    }

    @Test("a guest links Apple: provider apple, the credential, the raw nonce, with the guest's bearer")
    func guestLinks() async throws {
        let server = FakeServer([
            "POST /v1/auth/anonymous": FakeServer.signIn("guest", isAnonymous: true),
            "POST /v1/users/me/identities": FakeServer.user("guest", identities: [Self.appleIdentity]),
        ])
        let client = server.client()
        try await client.signInAnonymously()
        let provider = StandInAppleProvider()
        let user = try await client.linkWithApple(using: provider)
        #expect(user.id == "guest" && !user.isAnonymous && user.identities == [Self.appleIdentity])
        #expect(await client.currentUser == user)

        let sent = try #require(server.requests(to: "POST /v1/users/me/identities").first)
        #expect(sent.bearer == "access-guest")
        let body = try #require(sent.body)
        #expect(body["provider"] == "apple")
        #expect(body["idToken"] == .string(AppleIDCredential.sample().identityToken))
        #expect(body["authorizationCode"] == "c0de.1.apple" && body["givenName"] == "Ada")
        let raw = try #require(body["nonce"]?.stringValue)
        #expect(Nonce(raw: raw).sha256 == provider.asked.first?.nonceSHA256)
        #expect(server.requests(to: "POST /v1/auth/apple").isEmpty)
    }

    @Test("link(with: .apple(…)) posts provider apple; a Facebook link's body is as before, without provider")
    func linkBodies() async throws {
        let server = FakeServer([
            "POST /v1/auth/apple": FakeServer.signIn("u1"),
            "POST /v1/users/me/identities": FakeServer.user("u1", identities: [Self.appleIdentity]),
        ])
        let client = server.client()
        try await client.signIn(with: .sample(), rawNonce: "first")
        try await client.link(with: .apple(.sample(givenName: nil, familyName: nil), rawNonce: "raw-2"))
        try await client.link(with: .accessToken("EAAB"))
        try await client.link(
            with: .facebook(.limitedLogin(idToken: "id", rawNonce: "n"), fieldsMapping: ["email": "e"]))
        let bodies = server.requests(to: "POST /v1/users/me/identities").compactMap(\.body)
        #expect(
            bodies == [
                [
                    "provider": "apple", "idToken": .string(AppleIDCredential.sample().identityToken),
                    "authorizationCode": "c0de.1.apple", "nonce": "raw-2",
                ],
                ["accessToken": "EAAB"],
                ["idToken": "id", "nonce": "n", "fieldsMapping": ["email": "e"]],
            ])
    }

    @Test("an Apple ID another account has: identity_already_linked with its ticket, and still signed in")
    func conflict() async throws {
        let server = FakeServer([
            "POST /v1/auth/apple": FakeServer.signIn("owner"),
            "POST /v1/auth/anonymous": FakeServer.signIn("guest", isAnonymous: true),
            "POST /v1/users/me/identities": .error(.identityAlreadyLinked, status: 409, linkTicket: "ticket-1"),
            "POST /v1/users/me/identities/complete": .json(
                LinkCompletionBody(
                    user: UserBody(id: "owner", properties: [:], identities: [Self.appleIdentity], createdAt: 0),
                    mergedUserID: "guest")),
        ])
        let client = server.client()
        try await client.signInAnonymously()
        let error = await #expect(throws: LatchkeyError.self) {
            try await client.linkWithApple(using: StandInAppleProvider())
        }
        #expect(error?.code == .identityAlreadyLinked && error?.linkTicket == "ticket-1")
        #expect(await client.currentUser?.id == "guest")
        // The code was spent at Apple by the failed link: a new authorization signs in, then merges.
        let ticket = try #require(error?.linkTicket)
        try await client.signInWithApple(using: StandInAppleProvider())
        let merged = try await client.completeLink(ticket: ticket)
        #expect(merged.user.id == "owner" && merged.mergedUserID == "guest")
        #expect(server.requests(to: "POST /v1/users/me/identities/complete").first?.bearer == "access-owner")
    }

    @Test(
        "a link refused for its credential keeps the session; one refused for the session ends it",
        arguments: [
            (ErrorCode.nonceMismatch, 401, true), (.idTokenExpired, 401, true), (.facebookTokenInvalid, 401, true),
            (.sessionRevoked, 401, false), (.userDisabled, 403, false),
        ])
    func linkFailureKeepsSession(code: ErrorCode, status: Int, staysSignedIn: Bool) async throws {
        let server = FakeServer([
            "POST /v1/auth/anonymous": FakeServer.signIn("guest", isAnonymous: true),
            "POST /v1/users/me/identities": .error(code, status: status),
        ])
        let client = server.client()
        try await client.signInAnonymously()
        let error = await #expect(throws: LatchkeyError.self) {
            try await client.linkWithApple(using: StandInAppleProvider())
        }
        #expect(error?.code == code)
        #expect((await client.currentUser?.id == "guest") == staysSignedIn, "\(code)")
    }

    @Test("linking without a session is not_signed_in, and Apple's sheet is never shown")
    func linkSignedOut() async throws {
        let provider = StandInAppleProvider()
        let error = await #expect(throws: LatchkeyError.self) {
            try await FakeServer().client().linkWithApple(using: provider)
        }
        #expect(error?.code == .notSignedIn)
        #expect(provider.asked.isEmpty)
    }

    @Test("unlink(provider: \"apple\", subject:) deletes that identity")
    func unlink() async throws {
        let subject = Self.appleIdentity.subject
        let server = FakeServer([
            "POST /v1/auth/apple": FakeServer.signIn("u1"),
            "DELETE /v1/users/me/identities/apple/\(subject)": FakeServer.user("u1", identities: []),
        ])
        let client = server.client()
        try await client.signInWithApple(using: StandInAppleProvider())
        let user = try await client.unlink(provider: "apple", subject: subject)
        #expect(user.identities.isEmpty)
        #expect(server.requests(to: "DELETE /v1/users/me/identities/apple/\(subject)").first?.bearer == "access-u1")
    }

    @Test("the completion-handler forms answer once, with the result or the error")
    func completions() async throws {
        let server = FakeServer([
            "POST /v1/auth/apple": FakeServer.signIn("u1"),
            "POST /v1/users/me/identities": FakeServer.user("u1", identities: [Self.appleIdentity]),
        ])
        let client = server.client()
        let (result, error) = await withCheckedContinuation { continuation in
            client.signInWithApple(using: StandInAppleProvider()) { result, error in
                continuation.resume(returning: (result, error))
            }
        }
        #expect(result?.user.id == "u1" && error == nil)
        let cancelled = await withCheckedContinuation { continuation in
            client.signIn(with: .sample(), rawNonce: "n") { _, _ in
                client.linkWithApple(using: StandInAppleProvider(.cancel)) { _, error in
                    continuation.resume(returning: error)
                }
            }
        }
        #expect(cancelled?.code == .userCancelled)
        let linked = await withCheckedContinuation { continuation in
            client.link(with: .apple(.sample(), rawNonce: "n")) { user, _ in continuation.resume(returning: user) }
        }
        #expect(linked?.identities == [Self.appleIdentity])
    }
}

@Suite("Sign in with Apple through the session model")
@MainActor
struct AppleSessionModelTests {
    @Test("SignInMethod.apple signs the model in")
    func signsIn() async throws {
        let server = FakeServer(["POST /v1/auth/apple": FakeServer.signIn("u1")])
        let model = LatchkeySessionModel(client: server.client())
        let provider = StandInAppleProvider()
        await model.signIn(.apple(provider, scopes: [.email]))
        #expect(model.isSignedIn && model.user?.id == "u1" && model.lastError == nil)
        #expect(provider.asked.map(\.scopes) == [[.email]])
    }

    @Test("a cancel is reported to the action's events as user_cancelled, never as lastError")
    func cancel() async throws {
        let server = FakeServer()
        let model = LatchkeySessionModel(client: server.client())
        let action = LatchkeyActionID()
        var events = model.events(for: action).makeAsyncIterator()
        await model.signIn(.apple(StandInAppleProvider(.cancel)), action: action)
        #expect(!model.isSignedIn && model.lastError == nil)
        // Reported before signIn returned; the face is not decided before a restore, so it comes first.
        guard case .failed(let error) = await events.next() else {
            Issue.record("the first event must be the failure")
            return
        }
        #expect(error.code == .userCancelled)
    }

    @Test("a code Apple refused is lastError, for an alert")
    func failure() async throws {
        let server = FakeServer(["POST /v1/auth/apple": .error(.appleCodeInvalid, status: 400)])
        let model = LatchkeySessionModel(client: server.client())
        await model.signIn(.apple(StandInAppleProvider()))
        #expect(model.lastError?.code == .appleCodeInvalid)
        #expect(!model.isSignedIn)
    }
}
