import Foundation

/// How a session was opened: what "where you're signed in" shows, and what a provider's
/// deauthorization ends (`LATCHKEY_DEAUTHORIZE_ENDS`).
package enum SessionMethod: String, Sendable, CaseIterable, Codable {
    /// A classic Facebook access token (`POST /v1/auth/facebook` with `accessToken`).
    case classic
    /// A Limited Login id token.
    case limitedLogin = "limited_login"
    /// Easy Login: the web dialog, then the app's code redemption.
    case easyLogin = "easy_login"
    /// Sign in with Apple.
    case apple
    /// A guest (`POST /v1/auth/anonymous`): no identity.
    case guest
}

/// The client a request came from, as the sessions list and the audit log keep it: the address
/// (after `LATCHKEY_TRUSTED_PROXIES`) and the `User-Agent`, bounded. Never a credential.
package struct ClientInfo: Sendable, Equatable {
    /// The longest user agent kept: enough for any browser's or app's, and a stranger cannot make
    /// a row grow without bound.
    package static let maximumUserAgentLength = 256

    /// The IP address as text (`203.0.113.7`, `2001:db8::1`), or `nil` when unknown.
    package var address: String?
    /// The `User-Agent` header, cut to `maximumUserAgentLength` characters with control characters
    /// removed, or `nil` when absent.
    package var userAgent: String?

    /// No client (background work, the command line, tests).
    package static let unknown = ClientInfo(address: nil, userAgent: nil)

    /// Creates a client record, bounding and cleaning the user agent.
    package init(address: String?, userAgent: String?) {
        self.address = address
        self.userAgent = userAgent.flatMap(Self.clean)
    }

    /// The header's printable ASCII, at most `maximumUserAgentLength` characters; `nil` when
    /// nothing is left. Control characters would let a stranger forge lines in a log or a page.
    private static func clean(_ header: String) -> String? {
        let kept = String(
            String.UnicodeScalarView(
                header.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.prefix(maximumUserAgentLength)))
        let trimmed = kept.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? nil : trimmed
    }
}

/// A session as the store holds it, for the list of a user's active sessions.
package struct StoredSession: Sendable, Equatable {
    /// Its id (the access tokens' `sid`).
    package var id: String
    /// When it was opened.
    package var createdAt: Date
    /// Its last refresh-token rotation; `nil` when never refreshed.
    package var refreshedAt: Date?
    /// When it ends unless refreshed.
    package var expiresAt: Date
    /// How it was opened; `nil` for a session opened before Latchkey recorded it.
    package var method: SessionMethod?
    /// The identity that opened it (`nil` for a guest, or a session from before it was recorded).
    package var provider: String?
    /// The identity's subject.
    package var subject: String?
    /// The client that opened it.
    package var client: ClientInfo

    /// Creates a stored session.
    package init(
        id: String, createdAt: Date, refreshedAt: Date?, expiresAt: Date, method: SessionMethod?, provider: String?,
        subject: String?, client: ClientInfo
    ) {
        self.id = id
        self.createdAt = createdAt
        self.refreshedAt = refreshedAt
        self.expiresAt = expiresAt
        self.method = method
        self.provider = provider
        self.subject = subject
        self.client = client
    }
}

/// How a session was authenticated: what its access tokens say in `amr` (RFC 8176) and `aal`.
package struct SessionAssurance: Sendable, Equatable {
    /// How it opened; `nil` for a session from before Latchkey recorded it.
    package var method: SessionMethod?
    /// The second factor proven at its sign-in or a later step-up.
    package var secondFactor: SecondFactorKind?

    /// A session whose origin was not recorded.
    package static let unrecorded = SessionAssurance(method: nil, secondFactor: nil)

    /// Creates an assurance.
    package init(method: SessionMethod?, secondFactor: SecondFactorKind? = nil) {
        self.method = method
        self.secondFactor = secondFactor
    }

    /// `amr`: the first factor's value (`fb` for every Facebook path, `apple`, `anon` for a guest,
    /// Latchkey's documented values: RFC 8176 registers none for a social provider), then the
    /// second factor's (`otp`, `rcode`) and RFC 8176's `mfa` when there is one.
    package var amr: [String] {
        var values: [String] =
            switch method {
            case .classic, .limitedLogin, .easyLogin: ["fb"]
            case .apple: ["apple"]
            case .guest: ["anon"]
            case nil: []
            }
        if let secondFactor { values += [secondFactor.amr, "mfa"] }
        return values
    }

    /// `aal`: 2 with a second factor, else 1.
    package var aal: Int { secondFactor == nil ? 1 : 2 }
}

/// What a store knows of how a session proved who holds it: what a change of a second factor
/// is judged on (`Verdicts.factorChange`).
package struct SessionProof: Sendable, Equatable {
    /// The session's user.
    package var userID: String
    /// Live (not past its end), not revoked, and its user present and enabled.
    package var active: Bool
    /// Its user is a guest.
    package var anonymous: Bool
    /// When it opened (its sign-in, and any second factor that sign-in passed).
    package var createdAt: Date
    /// Its sign-in, or the latest re-proof of an identity it holds.
    package var authenticatedAt: Date
    /// Its latest passed step-up, if any.
    package var steppedUpAt: Date?
    /// The second factor it proved (`aal` 2), at sign-in or a step-up.
    package var secondFactor: SecondFactorKind?

    /// Creates a proof.
    package init(
        userID: String, active: Bool, anonymous: Bool, createdAt: Date, authenticatedAt: Date, steppedUpAt: Date?,
        secondFactor: SecondFactorKind?
    ) {
        self.createdAt = createdAt
        self.userID = userID
        self.active = active
        self.anonymous = anonymous
        self.authenticatedAt = authenticatedAt
        self.steppedUpAt = steppedUpAt
        self.secondFactor = secondFactor
    }

    /// The latest proof of any credential: the sign-in's, a re-proven identity's, or a step-up's.
    package var latestProof: Date { max(authenticatedAt, steppedUpAt ?? authenticatedAt) }

    /// The latest proof of a second factor: the latest step-up, else the sign-in when it passed
    /// one; `nil` for a session that never proved one. A re-proven identity is no such proof.
    package var factorProvenAt: Date? { steppedUpAt ?? (secondFactor == nil ? nil : createdAt) }
}
