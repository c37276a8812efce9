/// The body of `POST /v1/users/me/identities/complete`: the ticket a `409 identity_already_linked`
/// carried, sent with the bearer of the account that owns the identity.
public struct LinkCompletionRequest: Codable, Sendable, Equatable {
    /// The `linkTicket` of the conflict's error body.
    public var linkTicket: String

    /// The request's field names, as the server checks them.
    public enum CodingKeys: String, CodingKey, CaseIterable, Sendable {
        case linkTicket
    }

    /// Creates the request.
    public init(linkTicket: String) { self.linkTicket = linkTicket }

    /// The request as a JSON body.
    public var json: JSONValue { [CodingKeys.linkTicket.stringValue: .string(linkTicket)] }
}

/// The answer of `POST /v1/users/me/identities/complete`: the caller's account after the merge,
/// and the id of the account merged into it (deleted now), so the app can move its own rows.
public struct LinkCompletionBody: Codable, Sendable, Equatable {
    /// The caller's user, with the merged account's identities and missing properties.
    public var user: UserBody
    /// The user that no longer exists.
    public var mergedUserID: String

    enum CodingKeys: String, CodingKey {
        case user
        case mergedUserID = "mergedUserId"
    }

    /// Creates the answer.
    public init(user: UserBody, mergedUserID: String) {
        self.user = user
        self.mergedUserID = mergedUserID
    }
}

/// The answer of `POST /v1/users/me/identities/link-requests`: a handle that the app passes to
/// `/v1/oauth/authorize` as `link_request`, so that Easy Login links the identity to the caller
/// instead of signing in, with no bearer token in a URL.
public struct LinkRequestBody: Codable, Sendable, Equatable {
    /// The handle: single use, short-lived, bound to the caller's session.
    public var linkRequest: String
    /// Seconds until it expires.
    public var expiresIn: Int

    /// Creates the answer.
    public init(linkRequest: String, expiresIn: Int) {
        self.linkRequest = linkRequest
        self.expiresIn = expiresIn
    }
}

/// The answer of identity changes (`POST /v1/users/me/identities`, `DELETE …/{provider}/{subject}`).
public struct UserAnswerBody: Codable, Sendable, Equatable {
    /// The user after the change.
    public var user: UserBody

    /// Creates the answer.
    public init(user: UserBody) { self.user = user }
}
