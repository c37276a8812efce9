import Foundation
import Latchkey
import LatchkeyAPI
import LatchkeyServer
import Testing

/// The SDK's "where you're signed in" and security history, against the real server.
@Suite("SDK account activity")
struct SDKAccountActivityTests {
    @Test("a device lists the sessions, ends another device's, and pages through the events")
    func sessionsAndEvents() async throws {
        try await Stack.run { stack in
            let phone = SDKEndToEndTests.client(stack)
            let tablet = SDKEndToEndTests.client(stack)
            _ = try await phone.signIn(with: .accessToken(try await stack.facebookToken("alice")))
            _ = try await tablet.signIn(with: .accessToken(try await stack.facebookToken("alice")))

            let sessions = try await phone.activeSessions()
            #expect(sessions.count == 2 && sessions.filter(\.current).count == 1)
            #expect(sessions.allSatisfy { $0.method == "classic" && $0.provider == "facebook" })
            let other = try #require(sessions.first { !$0.current })
            try await phone.endSession(id: other.id)
            // The tablet finds out at its next call, and is signed out there.
            await #expect(throws: LatchkeyError.self) { try await tablet.reloadUser() }
            #expect(await tablet.authState == .closed)
            #expect(await phone.authState != .closed)
            let missing = await SDKIdentityTests.failure { () async throws(LatchkeyError) in
                try await phone.endSession(id: other.id)
            }
            #expect(missing?.code == .notFound)

            var seen: [SecurityEventBody] = []
            var cursor: String?
            repeat {
                let page = try await phone.securityEvents(cursor: cursor, limit: 2)
                seen += page.events
                cursor = page.nextCursor
            } while cursor != nil
            #expect(seen.map(\.type) == ["session.ended", "user.signed_in", "user.created"])
        }
    }

    @Test("ending this device's own session signs out here")
    func endOwnSession() async throws {
        try await Stack.run { stack in
            let store = InMemoryCredentialStore()
            let client = SDKEndToEndTests.client(stack, store: store)
            _ = try await client.signIn(with: .accessToken(try await stack.facebookToken("alice")))
            let own = try #require(try await client.activeSessions().first { $0.current })
            try await client.endSession(id: own.id)
            #expect(await client.authState == .closed)
            #expect(try await store.load() == nil)
        }
    }
}
