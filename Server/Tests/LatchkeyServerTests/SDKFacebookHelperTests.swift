import AsyncHTTPClient
import Foundation
import Latchkey
import LatchkeyAPI
import Testing

/// The SDK's Facebook-side helpers against the emulator: id-token validation and the dialog round trip.
@Suite("SDK Facebook helpers")
struct SDKFacebookHelperTests {
    static func validator(_ stack: Stack) async throws -> IDTokenValidator {
        try await IDTokenValidator.fetch(
            appID: Demo.appID, jwksURL: URL(string: stack.emulatorURL + "/.well-known/oauth/openid/jwks/")!)
    }

    @Test("a valid id token yields the FacebookProfile with permission-gated fields")
    func profile() async throws {
        try await Stack.run { stack in
            let token = try await stack.idToken(
                nonce: "n-1", scopes: ["email", "user_birthday", "user_age_range", "user_location", "user_friends"])
            let profile = try await Self.validator(stack).validate(token, nonce: "n-1", now: stack.clock.now)
            #expect(profile.userID == appScopedID("alice"))
            #expect(profile.name == "Alice Liddell" && profile.firstName == "Alice" && profile.lastName == "Liddell")
            #expect(profile.email == "alice@example.com" && profile.birthday == "05/04/1992")
            #expect(profile.minimumAge == 21 && profile.ageRange == nil)
            #expect(profile.location?.name == "London, United Kingdom")
            #expect(profile.friendIDs == [])
            #expect(profile.gender == nil && profile.hometown == nil)
            #expect(profile.imageURL != nil)
        }
    }

    @Test(
        "each broken id token is refused on the device",
        arguments: [
            ("wrong_audience", "id_token_wrong_audience"), ("wrong_issuer", "id_token_wrong_issuer"),
            ("expired", "id_token_expired"), ("stale_iat", "id_token_iat_invalid"),
            ("unknown_kid", "id_token_unknown_key"),
            ("missing_kid", "id_token_invalid"), ("alg_none", "id_token_invalid"), ("alg_hs256", "id_token_invalid"),
            ("bad_signature", "id_token_invalid"), ("missing_nonce", "nonce_mismatch"),
            ("missing_jti", "id_token_invalid"),
        ])
    func defects(defect: String, code: String) async throws {
        try await Stack.run { stack in
            let token = try await stack.idToken(nonce: "n-1", defect: defect)
            let validator = try await Self.validator(stack)
            #expect(errorCode { _ = try validator.validate(token, nonce: "n-1", now: stack.clock.now) } == code)
            let honest = try await stack.idToken(nonce: "n-1")
            #expect(
                errorCode { _ = try validator.validate(honest, nonce: "other", now: stack.clock.now) }
                    == "nonce_mismatch")
            #expect(errorCode { _ = try validator.validate(honest, nonce: "n-1", now: stack.clock.now) } == nil)
        }
    }

    /// Follows the dialog once, without following the redirect to the app's scheme.
    static func dialog(_ url: URL) async throws -> URL {
        let client = HTTPClient(configuration: .init(redirectConfiguration: .disallow))
        do {
            let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(10))
            let location = try #require(response.headers["Location"].first)
            try await client.shutdown()
            return try #require(URL(string: location))
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    @Test("the dialog URL round-trips: Limited Login id token, classic PKCE code, cancel, foreign state")
    func dialogRoundTrip() async throws {
        try await Stack.run { stack in
            let dialog = URL(string: stack.emulatorURL + "/v21.0/dialog/oauth")!
            let nonce = Nonce()
            let limited = FacebookLoginRequest(
                appID: Demo.appID,
                configuration: try #require(
                    FacebookLoginConfiguration(permissions: ["email"], tracking: .limited, nonce: nonce.sha256)))
            let limitedURL = URL(string: limited.url(dialogURL: dialog).absoluteString + "&emulator_user=bob")!
            let answer = try limited.parse(try await Self.dialog(limitedURL))
            let idToken = try #require(answer.idToken)
            #expect(answer.grantedPermissions == ["email", "public_profile"])
            let profile = try await Self.validator(stack).validate(idToken, nonce: nonce.sha256, now: stack.clock.now)
            #expect(profile.email == "bob@example.com")
            // And the server accepts it with the raw nonce.
            let client = SDKEndToEndTests.client(stack)
            #expect(
                try await client.signIn(with: .limitedLogin(idToken: idToken, rawNonce: nonce.raw)).user.string("email")
                    == "bob@example.com")

            let classic = FacebookLoginRequest(
                appID: Demo.appID, configuration: try #require(FacebookLoginConfiguration(permissions: ["email"])))
            let classicURL = URL(string: classic.url(dialogURL: dialog).absoluteString + "&emulator_user=alice")!
            let code = try #require(try classic.parse(try await Self.dialog(classicURL)).code)
            #expect(code.hasPrefix("AQ"))

            let cancelURL = URL(string: classic.url(dialogURL: dialog).absoluteString + "&emulator_action=cancel")!
            let cancelled = try await Self.dialog(cancelURL)
            #expect(errorCode { _ = try classic.parse(cancelled) } == "user_cancelled")
            let other = FacebookLoginRequest(
                appID: Demo.appID, configuration: try #require(FacebookLoginConfiguration()))
            #expect(errorCode { _ = try other.parse(cancelled) } == "state_mismatch")
        }
    }
}

/// The `LatchkeyError` code `work` throws, `nil` when it succeeds.
func errorCode(_ work: () throws -> Void) -> String? {
    do {
        try work()
        return nil
    } catch let error as LatchkeyError {
        return error.code.rawValue
    } catch {
        return "unexpected: \(error)"
    }
}
