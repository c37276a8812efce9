import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import NIOCore
import Testing

/// Easy Login linking: a link request from the signed-in session, the dialog, and a callback that
/// links instead of signing in, with no bearer token in any URL.
@Suite("Easy Login links identities")
struct EasyLoginLinkTests {
    static func linkRequest(_ stack: Stack, bearer: String) async throws -> String {
        let response = try await IdentityTests.send(
            stack, .post, "/v1/users/me/identities/link-requests", bearer: bearer, json: [:])
        #expect(response.status == .ok)
        return try #require(try response.json()["linkRequest"]?.stringValue)
    }

    @Test("the identity joins the caller, and the code opens a session of the same user")
    func links() async throws {
        try await Stack.run(browsable: true, { IdentityTests.configure(&$0) }) { stack in
            let guest = try await stack.post("/v1/auth/anonymous", json: [:]).json()
            let guestID = try #require(guest["user"]?["id"]?.stringValue)
            let handle = try await Self.linkRequest(stack, bearer: try IdentityTests.bearer(guest))
            var request = AuthorizeRequest()
            request.extra = [("link_request", handle)]
            let answer = try await EasyLoginTests.redirect(stack, request, choose: "emulator_user=bob")
            let code = try #require(answer["code"], "\(answer)")
            let issued = try JSONDecoder().decode(
                SessionBody.self,
                from: Data(
                    try await stack.postForm("/v1/oauth/token", request.tokenForm(code: code)).body.readableBytesView))
            let me = try await stack.get("/v1/users/me", bearer: issued.accessToken).json()
            #expect(me["id"]?.stringValue == guestID && me["isAnonymous"] == false)
            #expect(me["identities"]?.arrayValue?.count == 1)
            // Spent: the same handle cannot start another link.
            let again = try await EasyLoginTests.redirect(stack, request, choose: "emulator_user=bob")
            #expect(again["error_code"] == "link_request_invalid" && again["code"] == nil)
        }
    }

    @Test("another account's identity reaches the app as identity_already_linked with a ticket that completes")
    func conflict() async throws {
        try await Stack.run(browsable: true, { IdentityTests.configure(&$0) }) { stack in
            let alice = try await IdentityTests.signIn(stack, "alice")
            let bob = try await IdentityTests.signIn(stack, "bob")
            let handle = try await Self.linkRequest(stack, bearer: try IdentityTests.bearer(bob))
            var request = AuthorizeRequest()
            request.extra = [("link_request", handle)]
            let answer = try await EasyLoginTests.redirect(stack, request, choose: "emulator_user=alice")
            #expect(answer["error"] == "access_denied" && answer["error_code"] == "identity_already_linked")
            let ticket = try #require(answer["link_ticket"])
            let merged = try await IdentityTests.send(
                stack, .post, "/v1/users/me/identities/complete", bearer: try IdentityTests.bearer(alice),
                json: ["linkTicket": .string(ticket)])
            #expect(try merged.json()["mergedUserId"] == bob["user"]?["id"])
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
            // Ended between the dialog and the callback: the session signed out.
            let bob = try await IdentityTests.signIn(stack, "bob")
            let handle = try await Self.linkRequest(stack, bearer: try IdentityTests.bearer(bob))
            request.extra = [("link_request", handle)]
            let ended = try await EasyLoginTests.redirect(stack, request, choose: "emulator_user=carol") {
                _ = try await IdentityTests.send(stack, .post, "/v1/auth/logout", bearer: try IdentityTests.bearer(bob))
            }
            #expect(ended["error_code"] == "link_request_invalid")
            #expect(
                try await stack.store.user(id: try #require(bob["user"]?["id"]?.stringValue))?.identities.count == 1)
            // Expired.
            let late = try await Self.linkRequest(
                stack, bearer: try IdentityTests.bearer(try await IdentityTests.signIn(stack, "dave")))
            stack.clock.advance(601)
            request.extra = [("link_request", late)]
            let expired = try await TestBrowser.get(request.url(stack))
            #expect(TestBrowser.query(try #require(expired.location))["error_code"] == "link_request_invalid")
        }
    }
}
