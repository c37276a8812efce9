import Foundation
import LatchkeyAPI
import LatchkeyShared

/// "Where you're signed in" and the person's security history, as account settings show them.
extension LatchkeyClient {
    /// The signed-in user's active sessions, newest first: when each was opened and last
    /// refreshed, how (``ActiveSessionBody/method``: `classic`, `limited_login`, `easy_login`,
    /// `apple`, `guest`), with which provider, and from which network and browser or app.
    /// ``ActiveSessionBody/current`` marks this device's.
    public func activeSessions() async throws(LatchkeyError) -> [ActiveSessionBody] {
        try await authorized("GET", "v1/users/me/sessions", json: nil, as: ActiveSessionsBody.self).0.sessions
    }

    /// Ends one of the signed-in user's sessions, on whatever device holds it: its next request or
    /// refresh is refused there. Ending this device's own session (``ActiveSessionBody/current``)
    /// signs out here too, as ``signOut()`` does.
    /// - Throws: ``LatchkeyError/Code/notFound`` for an id that names none of the user's active
    ///   sessions.
    public func endSession(id: String) async throws(LatchkeyError) {
        let current = credentials?.sessionID
        _ = try await authorized("DELETE", "v1/users/me/sessions/\(Self.pathComponent(id))", json: nil, as: Data.self)
        if id == current, let ended = endLocally(clearingStore: false, reason: "This session was ended.") {
            _ = await persist(.clear(ended)).value
        }
    }

    /// A page of the signed-in user's security events, newest first: sign-ins, links, sessions
    /// ended, deletions, what Facebook or Apple reported. Pass the page's
    /// ``SecurityEventsBody/nextCursor`` as `cursor` for the next, older page; it is `nil` on the last.
    /// - Parameter limit: events per page, 1 to 100.
    public func securityEvents(
        cursor: String? = nil, limit: Int = 20
    ) async throws(LatchkeyError)
        -> SecurityEventsBody
    {
        var query = [("limit", String(limit))]
        if let cursor { query.append(("cursor", cursor)) }
        return try await authorized(
            "GET", "v1/users/me/events?" + FormEncoding.encode(query), json: nil, as: SecurityEventsBody.self
        ).0
    }
}
