import Foundation
import LatchkeyAPI
import LatchkeyServer
import PostgresNIO

extension PostgresStore {
    /// Stores an Easy Login request unless `limit` unexpired ones are waiting: one statement.
    ///
    /// The count and the insert share the statement's snapshot, so servers inserting at the same
    /// moment can each pass the count: the table may overshoot `limit` by at most the requests in
    /// flight at once (bounded by the pools), which still bounds what a stranger can make us store.
    package func savePendingAuthorization(
        _ request: PendingAuthorization, now: Date, limit: Int
    ) async throws -> Bool {
        let encoded = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        return try await withConnection("save pending authorization") { connection in
            try await !connection.rows(
                """
                INSERT INTO pending_authorizations (handle_hash, request, expires_at)
                SELECT \(request.handleHash), \(encoded)::json, \(request.expiresAt)
                WHERE (SELECT count(*) FROM pending_authorizations WHERE expires_at > \(now)) < \(limit)
                RETURNING 1
                """
            ).isEmpty
        }
    }

    /// Deletes and returns the request: a state value completes at most one flow.
    package func takePendingAuthorization(handleHash: Data) async throws -> PendingAuthorization? {
        let text = try await withConnection("take pending authorization") { connection in
            try await connection.rows(
                "DELETE FROM pending_authorizations WHERE handle_hash = \(handleHash) RETURNING request::text"
            ).first?.decode(String.self)
        }
        return try text.map { try JSONDecoder().decode(PendingAuthorization.self, from: Data($0.utf8)) }
    }

    /// Spends the code and opens its session, or reports why not, in one transaction holding the
    /// code's row lock; a second redemption revokes the session the first one opened.
    package func redeemAuthorizationCode(
        _ presentation: CodePresentation, session: NewSession, now: Date
    ) async throws -> CodeRedemption {
        try await transaction("redeem authorization code") { connection in
            guard
                let row = try await connection.rows(
                    """
                    SELECT c.client_id, c.redirect_uri, c.code_challenge, c.user_id, c.session_id, c.scope::text,
                        c.expires_at, c.used_at IS NOT NULL, c.redeemed, u.disabled, c.provider, c.subject,
                        c.second_factor
                    FROM authorization_codes c JOIN users u ON u.id = c.user_id
                    WHERE c.hash = \(presentation.hash) FOR UPDATE OF c
                    """
                ).first
            else { return .invalid }
            let (
                clientID, redirectURI, challenge, userID, sessionID, scope, expiresAt, used, redeemed, disabled,
                provider, subject, secondFactorText
            ) = try row.decode(
                (String, String, String, String, String, String, Date, Bool, Bool, Bool, String?, String?, String?).self
            )
            let secondFactor = secondFactorText.flatMap(SecondFactorKind.init(rawValue:))
            let verdict = Verdicts.code(
                StoredAuthorizationCode(
                    clientID: clientID, redirectURI: redirectURI, codeChallenge: challenge, expiresAt: expiresAt,
                    userDisabled: disabled, spent: used, redeemed: redeemed),
                presentation: presentation, now: now)
            switch verdict {
            case .ignore: return .invalid
            case .revokeSession:
                try await connection.run(
                    "UPDATE sessions SET revoked_at = \(now) WHERE id = \(sessionID) AND revoked_at IS NULL")
                return .reused
            case .redeem, .refuse: break
            }
            var b = StatementBuilder()
            // Spent whatever happens: a code presented with the wrong verifier may be in a thief's hands.
            var parts = [
                """
                spent AS (UPDATE authorization_codes SET used_at = \(b.bind(now)), redeemed = \(b.bind(verdict == .redeem)) \
                WHERE hash = \(b.bind(presentation.hash)))
                """
            ]
            var session = session
            session.secondFactor = secondFactor
            if verdict == .redeem {
                // The session the code was issued for, with this presentation's refresh token and
                // client, and the identity the code was issued to.
                parts += Self.sessionInserts(
                    user: b.bind(userID), id: b.bind(sessionID), tokenHash: b.bind(session.refreshTokenHash),
                    created: b.bind(session.createdAt), expires: b.bind(session.refreshExpiresAt),
                    origin: SessionOriginSQL(session, provider: b.bind(provider), subject: b.bind(subject), &b))
            }
            try await connection.run(b.query("WITH " + parts.joined(separator: ",\n") + "\nSELECT 1"))
            if case .refuse(let refusal) = verdict { return refusal }
            return .issued(
                sessionID: sessionID, userID: userID, scope: Self.decodeStrings(scope), secondFactor: secondFactor)
        }
    }

    /// The CTEs `sess` and `tok`, which insert a session for `user` and its first refresh token
    /// when `condition` holds; the session expires with that token until a rotation renews both.
    /// Every argument is SQL: a placeholder or an expression. Shared by the sign-in statements
    /// (`SignInParts`) and a code's redemption.
    ///
    /// `origin` is how, by which identity and from which client it opens (`NewSession`): SQL for
    /// `method, provider, subject, client_address, user_agent`.
    static func sessionInserts(
        user: String, id: String, tokenHash: String, created: String, expires: String, origin: SessionOriginSQL,
        when condition: String = "true"
    ) -> [String] {
        [
            """
            sess AS (INSERT INTO sessions (id, user_id, created_at, expires_at, method, provider, subject, \
            client_address, user_agent, second_factor) \
            SELECT \(id), \(user), \(created), \(expires), \(origin.method), \(origin.provider), \(origin.subject), \
            \(origin.address), \(origin.userAgent), \(origin.secondFactor) WHERE \(condition))
            """,
            """
            tok AS (INSERT INTO refresh_tokens (hash, session_id, created_at, expires_at) \
            SELECT \(tokenHash), \(id), \(created), \(expires) WHERE \(condition))
            """,
        ]
    }
}

/// The SQL of a new session's origin columns (`PostgresStore.sessionInserts`): placeholders or
/// expressions for how it opens, the identity opening it and the client.
struct SessionOriginSQL {
    var method: String
    var provider: String
    var subject: String
    var address: String
    var userAgent: String
    /// The second factor it proved (`NULL` in a sign-in statement: a sign-in proves none).
    var secondFactor = "NULL"

    /// Placeholders bound on `builder` for `session`'s method and client, with the identity's SQL.
    init(_ session: NewSession, provider: String, subject: String, _ builder: inout StatementBuilder) {
        method = builder.bind(session.method.rawValue)
        self.provider = provider
        self.subject = subject
        address = builder.bind(session.client.address)
        userAgent = builder.bind(session.client.userAgent)
        secondFactor = builder.bind(session.secondFactor?.rawValue)
    }

    /// Given SQL for each column.
    init(method: String, provider: String, subject: String, address: String, userAgent: String) {
        self.method = method
        self.provider = provider
        self.subject = subject
        self.address = address
        self.userAgent = userAgent
    }
}
