import Foundation
import Latchkey
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The SDK's guests, linking, conflicts and account deletion, against the real server.
@Suite("SDK identities")
struct SDKIdentityTests {
    @Test("a guest links Facebook and keeps its id; a conflict's ticket merges from the owner's side")
    func guestLinkAndConflict() async throws {
        try await Stack.run(IdentityTests.configure) { stack in
            let owner = SDKEndToEndTests.client(stack)
            let alice = try await owner.signIn(with: .accessToken(try await stack.facebookToken("alice"))).user
            let guestClient = SDKEndToEndTests.client(stack)
            let guest = try await guestClient.signInAnonymously()
            #expect(guest.isNewUser && guest.user.isAnonymous && guest.user.identities.isEmpty)
            _ = try await guestClient.updateUser(properties: ["favourite": "tea"])
            let linked = try await guestClient.link(with: .accessToken(try await stack.facebookToken("bob")))
            #expect(linked.id == guest.user.id && !linked.isAnonymous && linked.identities.count == 1)
            #expect(await guestClient.currentUser?.isAnonymous == false)
            // Alice's identity belongs to the owner's account: a conflict with a ticket.
            let aliceToken = try await stack.facebookToken("alice")
            let conflict = try #require(
                await Self.failure { () async throws(LatchkeyError) in
                    _ = try await guestClient.link(with: .accessToken(aliceToken))
                })
            #expect(conflict.code == .identityAlreadyLinked && conflict.httpStatus == 409)
            let ticket = try #require(conflict.linkTicket)
            let merged = try await owner.completeLink(ticket: ticket)
            #expect(merged.mergedUserID == guest.user.id && merged.user.id == alice.id)
            #expect(merged.user.identities.count == 2 && merged.user.string("favourite") == "tea")
            let ownerUser = await owner.currentUser
            #expect(ownerUser == merged.user)
            // The merged account's session is gone: its next call ends it here.
            await #expect(throws: LatchkeyError.self) { try await guestClient.reloadUser() }
            #expect(await guestClient.authState == .closed)
            // Unlinking: never the last identity.
            let current = await owner.currentUser
            let bobSubject = try #require(
                current?.identities.first { $0.subject != alice.identities.first?.subject }?.subject)
            let after = try await owner.unlink(subject: bobSubject)
            #expect(after.identities.count == 1)
            let last = try #require(after.identities.first?.subject)
            #expect(
                await Self.failure { () async throws(LatchkeyError) in _ = try await owner.unlink(subject: last) }?.code
                    == .lastSignInMethod)
        }
    }

    @Test("deleting the account ends the session here; too late after the sign-in, it asks to sign in again")
    func deleteAccount() async throws {
        try await Stack.run(IdentityTests.configure) { stack in
            let store = InMemoryCredentialStore()
            let client = SDKEndToEndTests.client(stack, store: store)
            let token = try await stack.facebookToken("alice")
            let first = try await client.signIn(with: .accessToken(token)).user
            stack.clock.advance(601)
            let refused = try #require(
                await Self.failure { () async throws(LatchkeyError) in _ = try await client.deleteAccount() })
            #expect(refused.code == .reauthenticationRequired && refused.httpStatus == 403)
            #expect(await client.currentUser?.id == first.id, "still signed in")
            // Linking the same credential again counts as a fresh sign-in.
            _ = try await client.link(with: .accessToken(try await stack.facebookToken("alice")))
            try await client.deleteAccount()
            let state = await client.authState
            let user = await client.currentUser
            #expect(state == .closed && user == nil)
            #expect(try await store.load() == nil)
            let again = try await client.signIn(with: .accessToken(try await stack.facebookToken("alice")))
            #expect(again.isNewUser && again.user.id != first.id)
        }
    }

    @Test("the completion-handler forms answer exactly once")
    func completions() async throws {
        try await Stack.run(IdentityTests.configure) { stack in
            let client = SDKEndToEndTests.client(stack)
            let result: SignInResult = try await withCheckedThrowingContinuation { continuation in
                client.signInAnonymously { result, error in
                    if let result {
                        continuation.resume(returning: result)
                    } else {
                        continuation.resume(throwing: error!)
                    }
                }
            }
            #expect(result.user.isAnonymous)
            let failure: LatchkeyError? = await withCheckedContinuation { continuation in
                client.unlink(subject: "123") { _, error in continuation.resume(returning: error) }
            }
            #expect(failure?.code == .notFound)
            let deleted: LatchkeyError? = await withCheckedContinuation { continuation in
                client.deleteAccount { error in continuation.resume(returning: error) }
            }
            let user = await client.currentUser
            #expect(deleted == nil && user == nil)
        }
    }

    @Test("Easy Login links through the sheet: the same user, a fresh session; a conflict carries its ticket")
    func easyLoginLink() async throws {
        try await Stack.run(browsable: true, { IdentityTests.configure(&$0) }) { stack in
            let client = SDKEasyLoginTests.client(stack)
            let guest = try await client.signInAnonymously().user
            // The browser sheet signs in as bob on Facebook.
            let linked = try await client.linkWithEasyLogin(using: SDKEasyLoginTests.BrowserSheet(stack: stack))
            #expect(linked.id == guest.id && !linked.isAnonymous && linked.identities.count == 1)
            let state = await client.authState
            #expect(state == .open)
            #expect(try await client.reloadUser().id == guest.id)
            // Bob's identity is this account's now: a second account linking it meets a conflict.
            let other = SDKEasyLoginTests.client(stack)
            _ = try await other.signIn(with: .accessToken(try await stack.facebookToken("carol")))
            let url = try await other.makeEasyLoginLinkURL()
            let redirect = try await SDKEasyLoginTests.browse(url, stack)
            let conflict = await Self.failure { () async throws(LatchkeyError) in
                _ = try await other.handleOpenURL(redirect)
            }
            #expect(conflict?.code == .identityAlreadyLinked && conflict?.linkTicket != nil)
            // The failed link kept the session it started from.
            let kept = await other.currentUser
            let otherState = await other.authState
            #expect(kept?.identities.count == 1 && otherState == .open)
        }
    }

    /// The error `body` throws, or `nil` when it succeeds.
    static func failure(_ body: () async throws(LatchkeyError) -> Void) async -> LatchkeyError? {
        do throws(LatchkeyError) {
            try await body()
            return nil
        } catch {
            return error
        }
    }
}
