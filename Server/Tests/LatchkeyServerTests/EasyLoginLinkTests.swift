import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import NIOCore
import Testing

/// Easy Login linking: a link request from the signed-in session bound to the app's PKCE challenge,
/// the dialog, and a code whose redemption with the verifier links instead of signing in, with no
/// bearer token in any URL.
@Suite("Easy Login links identities")
struct EasyLoginLinkTests {
    static func linkRequest(_ stack: Stack, bearer: String, for request: AuthorizeRequest) async throws -> String {
        let response = try await stack.send(
            .post, "/v1/users/me/identities/link-requests", bearer: bearer,
            json: ["codeChallenge": .string(request.challenge)])
        #expect(response.status == .ok)
        return try #require(try response.json()["linkRequest"]?.stringValue)
    }

    @Test("the identity joins the caller, and the code opens a session of the same user")
    func links() async throws {
        try await Stack.run(browsable: true, { IdentityTests.configure(&$0) }) { stack in
            let guest = try await stack.post("/v1/auth/anonymous", json: [:]).json()
            let guestID = try #require(guest["user"]?["id"]?.stringValue)
            var request = AuthorizeRequest()
            let handle = try await Self.linkRequest(stack, bearer: try IdentityTests.bearer(guest), for: request)
            request.extra = [("link_request", handle)]
            let answer = try await EasyLoginTests.redirect(stack, request, choose: "emulator_user=bob")
            let code = try #require(answer["code"], "\(answer)")
            // Nothing is linked before the code is redeemed with the verifier.
            #expect(try await stack.store.user(id: guestID)?.identities.isEmpty == true)
            var wrong = request
            wrong.verifier = String(repeating: "w", count: 43)
            let refused = try await stack.postForm("/v1/oauth/token", wrong.tokenForm(code: code))
            #expect(refused.errorCode == "authorization_code_invalid")
            #expect(try await stack.store.user(id: guestID)?.identities.isEmpty == true)
            let issued = try JSONDecoder().decode(
                SessionBody.self,
                from: Data(
                    try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code)).body.readableBytesView))
            let me = try await stack.get("/v1/users/me", bearer: issued.accessToken).json()
            #expect(me["id"]?.stringValue == guestID && me["isAnonymous"] == false)
            #expect(me["identities"]?.arrayValue?.count == 1)
            // Spent: the same code links nothing twice.
            let again = try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code))
            #expect(again.errorCode == "authorization_code_invalid")
        }
    }

    @Test("another account's identity reaches the app as identity_already_linked with a ticket that completes")
    func conflict() async throws {
        try await Stack.run(browsable: true, { IdentityTests.configure(&$0) }) { stack in
            let alice = try await IdentityTests.signIn(stack, "alice")
            let bob = try await IdentityTests.signIn(stack, "bob")
            var request = AuthorizeRequest()
            let handle = try await Self.linkRequest(stack, bearer: try IdentityTests.bearer(bob), for: request)
            request.extra = [("link_request", handle)]
            let answer = try await EasyLoginTests.redirect(stack, request, choose: "emulator_user=alice")
            let code = try #require(answer["code"])
            let redeemed = try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code))
            #expect(redeemed.status == .badRequest && redeemed.errorCode == "identity_already_linked")
            let ticket = try #require(try redeemed.json()["link_ticket"]?.stringValue)
            let merged = try await stack.send(
                .post, "/v1/users/me/identities/complete", bearer: try IdentityTests.bearer(alice),
                json: ["linkTicket": .string(ticket)])
            #expect(try merged.json()["mergedUserId"] == bob["user"]?["id"])
        }
    }

    @Test("linking a person whose other app's identity is another account's is that conflict, with a ticket")
    func businessConflict() async throws {
        try await Stack.run(browsable: true, { IdentityTests.configure(&$0) }) { stack in
            // Alice is known through the business's other app only.
            let alice = try await IdentityTests.signIn(stack, "alice", app: Demo.otherAppID)
            let bob = try await IdentityTests.signIn(stack, "bob")
            var request = AuthorizeRequest()
            let handle = try await Self.linkRequest(stack, bearer: try IdentityTests.bearer(bob), for: request)
            request.extra = [("link_request", handle)]
            let answer = try await EasyLoginTests.redirect(stack, request, choose: "emulator_user=alice")
            let redeemed = try await stack.postForm(
                "/v1/oauth/token", request.tokenForm(code: try #require(answer["code"])))
            #expect(redeemed.status == .badRequest && redeemed.errorCode == "identity_already_linked")
            let bobID = try #require(bob["user"]?["id"]?.stringValue)
            #expect(try await stack.store.user(id: bobID)?.identities.count == 1, "nothing linked")
            let ticket = try #require(try redeemed.json()["link_ticket"]?.stringValue)
            let merged = try await stack.send(
                .post, "/v1/users/me/identities/complete", bearer: try IdentityTests.bearer(alice),
                json: ["linkTicket": .string(ticket)])
            #expect(try merged.json()["mergedUserId"]?.stringValue == bobID)
        }
    }

    @Test("a forged, expired or ended link request is refused before Facebook, or at the callback")
    func refusals() async throws {
        try await Stack.run(browsable: true, { IdentityTests.configure(&$0) }) { stack in
            var request = AuthorizeRequest()
            request.extra = [("link_request", "forged")]
            let forged = try await TestBrowser.get(request.url(stack))
            let location = try #require(forged.location)
            #expect(
                location.hasPrefix(Demo.appRedirect)
                    && TestBrowser.query(location)["error_code"] == "link_request_invalid")
            // Bound to another request's challenge: refused before Facebook.
            let bob = try await IdentityTests.signIn(stack, "bob")
            let other = try await Self.linkRequest(
                stack, bearer: try IdentityTests.bearer(bob), for: AuthorizeRequest())
            request.extra = [("link_request", other)]
            let mismatched = try await TestBrowser.get(request.url(stack))
            #expect(TestBrowser.query(try #require(mismatched.location))["error_code"] == "link_request_invalid")
            // Ended between the dialog and the callback: the session signed out.
            let handle = try await Self.linkRequest(stack, bearer: try IdentityTests.bearer(bob), for: request)
            request.extra = [("link_request", handle)]
            let ended = try await EasyLoginTests.redirect(stack, request, choose: "emulator_user=carol") {
                _ = try await stack.send(.post, "/v1/auth/logout", bearer: try IdentityTests.bearer(bob))
            }
            #expect(ended["error_code"] == "link_request_invalid")
            #expect(
                try await stack.store.user(id: try #require(bob["user"]?["id"]?.stringValue))?.identities.count == 1)
            // Expired.
            let late = try await Self.linkRequest(
                stack, bearer: try IdentityTests.bearer(try await IdentityTests.signIn(stack, "dave")), for: request)
            stack.clock.advance(601)
            request.extra = [("link_request", late)]
            let expired = try await TestBrowser.get(request.url(stack))
            #expect(TestBrowser.query(try #require(expired.location))["error_code"] == "link_request_invalid")
        }
    }
}
