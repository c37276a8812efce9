import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyServer
import LatchkeyShared
import NIOCore
import Testing

/// "Where you're signed in": `GET /v1/users/me/sessions` and `DELETE /v1/users/me/sessions/{id}`.
@Suite("Account activity: sessions")
struct AccountActivityTests {
    static let iPhoneSafari =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 Mobile Safari/604.1"

    /// Signs `user` in with a classic token from a client sending `userAgent`: the session body.
    static func signIn(_ stack: Stack, user: String = "alice", userAgent: String?) async throws -> JSONValue {
        var headers = HTTPFields()
        if let userAgent { headers[.userAgent] = userAgent }
        let answer = try await stack.post(
            "/v1/auth/facebook", json: ["accessToken": .string(try await stack.facebookToken(user))], headers: headers)
        return try #require(try answer.json()["session"])
    }

    static func delete(_ stack: Stack, _ path: String, bearer: String) async throws -> TestResponse {
        try await stack.server.execute(uri: path, method: .delete, headers: [.authorization: "Bearer \(bearer)"])
    }

    @Test("the list shows each active session's method, provider, coarse client and refresh, and marks the caller's")
    func list() async throws {
        try await Stack.run { stack in
            let phone = try await Self.signIn(stack, userAgent: Self.iPhoneSafari)
            stack.clock.advance(10)
            let app = try await Self.signIn(stack, userAgent: "MyApp/3.1 CFNetwork/1490.0.4 Darwin/23.2.0")
            let bearer = try #require(phone["access_token"]?.stringValue)
            stack.clock.advance(10)
            _ = try await SessionTests.refresh(stack, try #require(app["refresh_token"]?.stringValue))

            let listed = try await stack.get("/v1/users/me/sessions", bearer: bearer)
            #expect(listed.status == .ok)
            let body = try JSONDecoder().decode(ActiveSessionsBody.self, from: Data(listed.body.readableBytesView))
            #expect(body.sessions.count == 2)
            let (newest, oldest) = (body.sessions[0], body.sessions[1])
            #expect(!newest.current && oldest.current)
            #expect(newest.client == ClientBody(network: "127.0.0.0/24", agent: "MyApp on Apple"))
            #expect(oldest.client == ClientBody(network: "127.0.0.0/24", agent: "Safari on iPhone"))
            #expect(newest.method == "classic" && newest.provider == "facebook")
            #expect(newest.lastRefreshedAt == 1_800_000_020 && oldest.lastRefreshedAt == nil)
            #expect(oldest.createdAt == 1_800_000_000 && newest.createdAt == 1_800_000_010)
            // The whole address and user agent are kept for the operator, never shown here.
            let text = String(buffer: listed.body)
            #expect(!text.contains("127.0.0.1") && !text.contains("CFNetwork") && !text.contains("AppleWebKit"))
        }
    }

    @Test("ending a session by id signs it out; another's, an ended or an unknown id is the same 404")
    func end() async throws {
        try await Stack.run { stack in
            let one = try #require(try await Self.signIn(stack, userAgent: nil)["access_token"]?.stringValue)
            let two = try #require(try await Self.signIn(stack, userAgent: nil)["access_token"]?.stringValue)
            let bob = try #require(
                try await Self.signIn(stack, user: "bob", userAgent: nil)["access_token"]?.stringValue)
            let sessions =
                try await stack.get("/v1/users/me/sessions", bearer: one).json()["sessions"]?.arrayValue ?? []
            let other = try #require(sessions.first { $0["current"] == false }?["id"]?.stringValue)
            let bobs = try #require(
                try await stack.get("/v1/users/me/sessions", bearer: bob).json()["sessions"]?.arrayValue?.first?["id"]?
                    .stringValue)

            #expect(try await Self.delete(stack, "/v1/users/me/sessions/\(bobs)", bearer: one).errorCode == "not_found")
            #expect(try await stack.get("/v1/users/me", bearer: bob).status == .ok)
            #expect(try await Self.delete(stack, "/v1/users/me/sessions/\(other)", bearer: one).status == .noContent)
            #expect(try await stack.get("/v1/users/me", bearer: two).errorCode == "session_revoked")
            #expect(
                try await Self.delete(stack, "/v1/users/me/sessions/\(other)", bearer: one).errorCode == "not_found")
            #expect(try await Self.delete(stack, "/v1/users/me/sessions/nope", bearer: one).errorCode == "not_found")
            let long = String(repeating: "x", count: 65)
            #expect(try await Self.delete(stack, "/v1/users/me/sessions/\(long)", bearer: one).errorCode == "not_found")
            #expect(
                try await Self.delete(stack, "/v1/users/me/sessions/\(other)", bearer: "x").errorCode == "unauthorized")
            let listed = try await stack.get("/v1/users/me/sessions", bearer: one).json()["sessions"]?.arrayValue
            #expect(listed?.count == 1 && listed?.first?["current"] == true)
        }
    }
}

/// The person's own security history: `GET /v1/users/me/events`.
@Suite("Account activity: events")
struct SecurityEventsTests {
    @Test("events come newest first, a page at a time, with the network and the agent of each request")
    func pages() async throws {
        try await Stack.run { stack in
            let first = try await AccountActivityTests.signIn(stack, userAgent: AccountActivityTests.iPhoneSafari)
            let bearer = try #require(first["access_token"]?.stringValue)
            let second = try await AccountActivityTests.signIn(stack, userAgent: "MyApp/3.1 CFNetwork/1490 Darwin/23")
            let refresh = try #require(second["refresh_token"]?.stringValue)
            let next = try await SessionTests.refresh(stack, refresh).json()["refresh_token"]?.stringValue
            _ = try await SessionTests.refresh(stack, try #require(next))
            stack.clock.advance(stack.configuration.sessions.refreshRetryWindow + 1)
            // The first token again, its successor spent and the retry window past: reuse, the
            // session ends, and the event says so.
            #expect(try await SessionTests.refresh(stack, refresh).errorCode == "refresh_token_reused")

            let page = try await stack.get("/v1/users/me/events?limit=2", bearer: bearer)
            #expect(page.status == .ok)
            let body = try JSONDecoder().decode(SecurityEventsBody.self, from: Data(page.body.readableBytesView))
            #expect(body.events.map(\.type) == ["session.refresh_reused", "user.signed_in"])
            #expect(body.events[1].client == ClientBody(network: "127.0.0.0/24", agent: "MyApp on Apple"))
            #expect(body.events[1].provider == "facebook" && body.events[1].details["method"] == "classic")
            let cursor = try #require(body.nextCursor)
            let older = try await stack.get("/v1/users/me/events?cursor=\(cursor)&limit=2", bearer: bearer)
            let rest = try JSONDecoder().decode(SecurityEventsBody.self, from: Data(older.body.readableBytesView))
            #expect(rest.events.map(\.type) == ["user.created"] && rest.nextCursor == nil)
            #expect(rest.events[0].client.agent == "Safari on iPhone")
            // Nothing a person should not see: no address, no user agent, no token.
            let text = String(buffer: page.body) + String(buffer: older.body)
            #expect(!text.contains("127.0.0.1") && !text.contains("CFNetwork") && !text.contains(refresh))

            for query in ["limit=0", "limit=101", "limit=x", "cursor=abc", "cursor=-1", "cursor=1&cursor=2"] {
                #expect(
                    try await stack.get("/v1/users/me/events?\(query)", bearer: bearer).errorCode == "invalid_request",
                    "\(query)")
            }
            #expect(try await stack.get("/v1/users/me/events").errorCode == "unauthorized")
        }
    }
}
