import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import Testing

/// Changing a second factor needs a recent proof (`Verdicts.factorChange`), over HTTP on the test
/// database (SQLite; PostgreSQL in its pass): a stolen session that signed in long ago cannot plant
/// the thief's authenticator, make recovery codes or remove the owner's factor. About 2 s.
@Suite("Second factor: changes need a recent sign-in")
struct FactorChangeTests {
    /// A session that signed in more than `LATCHKEY_REAUTHENTICATION_WINDOW` ago and was refreshed
    /// since: a thief's copy of it holds a valid access token.
    static func staleSession(_ stack: Stack, _ session: JSONValue) async throws -> JSONValue {
        stack.clock.advance(601)
        return try await SessionTests.refresh(stack, try #require(session["refresh_token"]?.stringValue)).json()
    }

    /// Alice enrols a factor, then signs in again passing it: the factor, and that aal-2 session.
    static func enrolledAndPassed(_ stack: Stack) async throws -> (SecondFactorTests.Enrolled, JSONValue) {
        let session = try await SecondFactorTests.signIn(stack)
        let enrolled = try await SecondFactorTests.enroll(
            stack, bearer: try #require(session["access_token"]?.stringValue))
        let held = try await stack.signIn(["accessToken": .string(try await stack.facebookToken())])
        let passed = try await SecondFactorTests.complete(
            stack, try SecondFactorTests.challenge(of: held), code: enrolled.authenticator.code())
        return (enrolled, try #require(try passed.json()["session"]))
    }

    @Test("without a factor, a stale session enrols none: 403 reauthentication_required, nothing stored")
    func staleSessionCannotPlantFirstFactor() async throws {
        try await Stack.run(SecondFactorTests.configure) { stack in
            let session = try await SecondFactorTests.signIn(stack)
            let stale = try await Self.staleSession(stack, session)
            let bearer = try #require(stale["access_token"]?.stringValue)
            let added = try await stack.send(
                .post, "/v1/users/me/factors", bearer: bearer, json: ["type": "totp", "displayName": "Thief"])
            #expect(added.status == .forbidden && added.errorCode == "reauthentication_required")
            #expect(try added.json()["error"]?["message"]?.stringValue?.hasPrefix("Changing the second factor") == true)
            #expect(try await stack.get("/v1/users/me/factors", bearer: bearer).json()["factors"] == [])
            // The owner still signs in with no challenge.
            #expect(try await stack.signIn(["accessToken": .string(try await stack.facebookToken())]).status == .ok)
            // A fresh sign-in may.
            let fresh = try #require(try await SecondFactorTests.signIn(stack)["access_token"]?.stringValue)
            _ = try await SecondFactorTests.enroll(stack, bearer: fresh)
        }
    }

    @Test("a factor added in the window is not activated, nor removed, by the same session once stale")
    func pendingFactorOutsideTheWindow() async throws {
        try await Stack.run(SecondFactorTests.configure) { stack in
            let session = try await SecondFactorTests.signIn(stack)
            let bearer = try #require(session["access_token"]?.stringValue)
            let added = try await stack.send(.post, "/v1/users/me/factors", bearer: bearer, json: ["type": "totp"])
            #expect(added.status == .created)
            let id = try #require(try added.json()["id"]?.stringValue)
            let authenticator = try TestAuthenticator(
                base32: try #require(try added.json()["secret"]?.stringValue), clock: stack.clock)
            let stale = try #require(try await Self.staleSession(stack, session)["access_token"]?.stringValue)
            let verified = try await stack.send(
                .post, "/v1/users/me/factors/\(id)/verify", bearer: stale, json: ["code": .string(authenticator.code())]
            )
            #expect(verified.status == .forbidden && verified.errorCode == "reauthentication_required")
            let removed = try await stack.send(.delete, "/v1/users/me/factors/\(id)", bearer: stale)
            #expect(removed.status == .forbidden && removed.errorCode == "reauthentication_required")
            #expect(
                try await stack.get("/v1/users/me/factors", bearer: stale).json()["factors"]?.arrayValue?.first?[
                    "status"] == "pending")
        }
    }

    @Test("with a factor, a stale aal-2 session steps up first; a passed step-up counts as recent")
    func staleSessionWithFactorStepsUp() async throws {
        try await Stack.run(SecondFactorTests.configure) { stack in
            let (enrolled, strong) = try await Self.enrolledAndPassed(stack)
            stack.clock.advance(30)
            // Stale, though aal 2: every change asks for the factor again.
            let stale = try await Self.staleSession(stack, strong)
            let bearer = try #require(stale["access_token"]?.stringValue)
            #expect(try await stack.verifiedClaims(bearer)["aal"] == 2)
            for (method, path, body) in [
                (HTTPRequest.Method.post, "/v1/users/me/factors", ["type": "totp"] as JSONValue),
                (.post, "/v1/users/me/recovery-codes", [:]),
                (.delete, "/v1/users/me/factors/\(enrolled.factorID)", nil),
            ] {
                let answer = try await stack.send(method, path, bearer: bearer, json: body)
                #expect(answer.status == .forbidden && answer.errorCode == "second_factor_required", "\(path)")
                #expect(try answer.json()["error"]?["challenge"]?.stringValue != nil, "\(path)")
            }
            // The step-up is the recent proof: new codes, then the factor removed.
            let challenge = try #require(
                try await stack.send(.post, "/v1/users/me/factors/challenge", bearer: bearer, json: [:]).json()[
                    "challenge"]?.stringValue)
            stack.clock.advance(30)
            let raised = try await SecondFactorTests.complete(stack, challenge, code: enrolled.authenticator.code())
            #expect(raised.status == .ok, "\(String(buffer: raised.body))")
            let renewed = try #require(try raised.json()["access_token"]?.stringValue)
            let codes = try await stack.send(.post, "/v1/users/me/recovery-codes", bearer: renewed, json: [:])
            #expect(codes.status == .ok, "\(String(buffer: codes.body))")
            // …but not for deleting the account, which asks for the first factor again.
            #expect(
                try await stack.send(.delete, "/v1/users/me", bearer: renewed).errorCode == "reauthentication_required")
            let removed = try await stack.send(.delete, "/v1/users/me/factors/\(enrolled.factorID)", bearer: renewed)
            #expect(removed.status == .noContent)
            // The step-up ages too.
            stack.clock.advance(601)
            let raisedRefresh = try #require(try raised.json()["refresh_token"]?.stringValue)
            let refreshed = try #require(
                try await SessionTests.refresh(stack, raisedRefresh).json()["access_token"]?.stringValue)
            let again = try await stack.send(.post, "/v1/users/me/factors", bearer: refreshed, json: ["type": "totp"])
            #expect(again.errorCode == "reauthentication_required", "no factor left: a sign-in, not a step-up")
        }
    }

    @Test("re-proving Facebook renews the sign-in, not the factor: a factor change still steps up")
    func reprovenIdentityIsNoFactorProof() async throws {
        try await Stack.run(SecondFactorTests.configure) { stack in
            let (enrolled, strong) = try await Self.enrolledAndPassed(stack)
            // Days later, a stolen phone: its session and its Facebook token.
            let stale = try await Self.staleSession(stack, strong)
            let bearer = try #require(stale["access_token"]?.stringValue)
            let reproven = try await stack.send(
                .post, "/v1/users/me/identities", bearer: bearer,
                json: ["accessToken": .string(try await stack.facebookToken())])
            #expect(reproven.status == .ok, "\(String(buffer: reproven.body))")
            let removed = try await stack.send(.delete, "/v1/users/me/factors/\(enrolled.factorID)", bearer: bearer)
            #expect(removed.status == .forbidden && removed.errorCode == "second_factor_required")
            let codes = try await stack.send(.post, "/v1/users/me/recovery-codes", bearer: bearer, json: [:])
            #expect(codes.errorCode == "second_factor_required")
        }
    }

    @Test("a guest changes no factor: 403 reauthentication_required")
    func guests() async throws {
        try await Stack.run(SecondFactorTests.configure) { stack in
            let guest = try await stack.post("/v1/auth/anonymous", json: [:]).json()
            let bearer = try #require(guest["session"]?["access_token"]?.stringValue)
            let added = try await stack.send(.post, "/v1/users/me/factors", bearer: bearer, json: ["type": "totp"])
            #expect(added.status == .forbidden && added.errorCode == "reauthentication_required")
        }
    }

    @Test("link, unlink, merge and deletion name their action in reauthentication_required")
    func messagesNameTheAction() async throws {
        try await Stack.run(IdentityTests.configure) { stack in
            let alice = try await IdentityTests.signIn(stack, "alice")
            let session = try #require(alice["session"])
            let stale = try #require(try await Self.staleSession(stack, session)["access_token"]?.stringValue)
            let link = try await stack.send(
                .post, "/v1/users/me/identities", bearer: stale,
                json: ["accessToken": .string(try await stack.facebookToken("bob"))])
            #expect(try link.json()["error"]?["message"]?.stringValue?.hasPrefix("Adding a sign-in method") == true)
            let subject = try #require(alice["user"]?["identities"]?.arrayValue?.first?["subject"]?.stringValue)
            let unlink = try await stack.send(.delete, "/v1/users/me/identities/facebook/\(subject)", bearer: stale)
            #expect(try unlink.json()["error"]?["message"]?.stringValue?.hasPrefix("Removing a sign-in method") == true)
            let delete = try await stack.send(.delete, "/v1/users/me", bearer: stale)
            #expect(try delete.json()["error"]?["message"]?.stringValue?.hasPrefix("Deleting the account") == true)
        }
    }
}
