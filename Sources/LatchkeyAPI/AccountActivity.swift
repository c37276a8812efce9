/// Where a request came from, as a person is shown it on their own sessions and events: coarse
/// on purpose (the network, not the address; the browser or app, not the whole user agent).
public struct ClientBody: Codable, Sendable, Equatable {
    /// The IPv4 /24 or IPv6 /48 the request came from (`203.0.113.0/24`, `2001:db8:1::/48`), or
    /// `nil` when unknown.
    public var network: String?
    /// The browser or app and its platform (`Safari on iPhone`, `MyApp on Apple`), from the user
    /// agent; `nil` when none was sent.
    public var agent: String?

    /// Creates a client body.
    public init(network: String?, agent: String?) {
        self.network = network
        self.agent = agent
    }
}

/// One of the signed-in person's active sessions (`GET /v1/users/me/sessions`): where they are
/// signed in.
public struct ActiveSessionBody: Codable, Sendable, Equatable {
    /// The session's id (`DELETE /v1/users/me/sessions/{id}` ends it).
    public var id: String
    /// When it was opened, seconds since 1970.
    public var createdAt: Int
    /// Its last refresh, seconds since 1970; `nil` when never refreshed.
    public var lastRefreshedAt: Int?
    /// When it ends unless refreshed, seconds since 1970.
    public var expiresAt: Int
    /// How it was opened: `classic`, `limited_login`, `easy_login`, `apple`, `guest`; `nil` for a
    /// session opened before the server recorded it.
    public var method: String?
    /// The provider of the identity that opened it (`facebook`, `apple`); `nil` for a guest.
    public var provider: String?
    /// The client that opened it.
    public var client: ClientBody
    /// Whether this is the session of the request's access token.
    public var current: Bool

    /// Creates a session body.
    public init(
        id: String, createdAt: Int, lastRefreshedAt: Int?, expiresAt: Int, method: String?, provider: String?,
        client: ClientBody, current: Bool
    ) {
        self.id = id
        self.createdAt = createdAt
        self.lastRefreshedAt = lastRefreshedAt
        self.expiresAt = expiresAt
        self.method = method
        self.provider = provider
        self.client = client
        self.current = current
    }
}

/// The answer of `GET /v1/users/me/sessions`.
public struct ActiveSessionsBody: Codable, Sendable, Equatable {
    /// The active sessions, newest first.
    public var sessions: [ActiveSessionBody]

    /// Creates a sessions list.
    public init(sessions: [ActiveSessionBody]) { self.sessions = sessions }
}

/// One of the signed-in person's security events (`GET /v1/users/me/events`): what happened to
/// their account, when, and from where.
public struct SecurityEventBody: Codable, Sendable, Equatable {
    /// The event's place in the log (pass the last one seen as `cursor` for older events).
    public var id: String
    /// What happened: `user.signed_in`, `user.created`, `identity.linked`, `session.ended`, … (the
    /// audit log's names, listed in the server's docs/audit.md).
    public var type: String
    /// When, seconds since 1970.
    public var at: Int
    /// The provider it concerns, if any (`facebook`, `apple`).
    public var provider: String?
    /// Where the request came from; both fields `nil` for what the server did on its own (a
    /// provider's callback, background work).
    public var client: ClientBody
    /// A few facts about it, as `details` names them (`method`, `sessions_ended`, `by`, `outcome`,
    /// `reason`); never a token, an address or another person's data.
    public var details: [String: JSONValue]

    /// Creates an event body.
    public init(
        id: String, type: String, at: Int, provider: String?, client: ClientBody, details: [String: JSONValue]
    ) {
        self.id = id
        self.type = type
        self.at = at
        self.provider = provider
        self.client = client
        self.details = details
    }
}

/// The answer of `GET /v1/users/me/events`: a page of events, newest first.
public struct SecurityEventsBody: Codable, Sendable, Equatable {
    /// The events.
    public var events: [SecurityEventBody]
    /// The `cursor` of the next (older) page; `nil` on the last page.
    public var nextCursor: String?

    /// Creates a page.
    public init(events: [SecurityEventBody], nextCursor: String?) {
        self.events = events
        self.nextCursor = nextCursor
    }
}
