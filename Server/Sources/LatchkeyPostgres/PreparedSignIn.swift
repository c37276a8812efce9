import Foundation
import LatchkeyServer
import NIOCore
import PostgresNIO

/// The parts both sign-in statements share, with the same parameter numbers in both: `$1` now,
/// `$2`/`$3` jti and its expiry, `$4` server nonce, `$7`–`$10` identity (provider, subject, app,
/// granted), `$13`–`$16` session (id, refresh token hash, created, expires), `$17`–`$23`
/// authorization code (hash, client, redirect URI, challenge, the session it opens when redeemed,
/// scope, expiry), `$25` audit detail; after each statement's own parameters, the session's
/// method, client address and user agent, the audit row's origin, and the second-factor challenge
/// (`open(for:origin:)`).
private enum SignInParts {
    /// Spends the jti and the server nonce (each only when given).
    static let spend = """
        jti AS (
            INSERT INTO single_use (kind, value, expires_at) SELECT 'jti', $2, $3 WHERE $2::text IS NOT NULL
            ON CONFLICT (kind, value) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE single_use.expires_at < $1 RETURNING 1),
        nonce AS (DELETE FROM nonces WHERE $4::text IS NOT NULL AND value = $4 AND expires_at > $1 RETURNING 1),
        """

    /// Opens the session and stores the authorization code (each only when given) for `user`,
    /// both recording the identity (`$7`, `$8`). The session's method, client address and user
    /// agent are bound at `$origin`, `$origin+1`, `$origin+2` (each statement's own numbers, after
    /// its other parameters; `bindOrigin`).
    ///
    /// `held` states `Verdicts.sessionOpening` for a sign-in: a session or code about to open for a
    /// user with an active factor is held back, and the login's challenge (hash, plan, expiry at
    /// `$origin+6` to `$origin+8`, `bindChallenge`) is stored instead. The contract suite runs this
    /// statement and the reference path alike.
    static func open(for user: String, origin: Int) -> String {
        let session = PostgresStore.sessionInserts(
            user: user, id: "$13", tokenHash: "$14", created: "$15", expires: "$16",
            origin: SessionOriginSQL(
                method: "$\(origin)", provider: "$7", subject: "$8", address: "$\(origin + 1)",
                userAgent: "$\(origin + 2)"),
            when: "$13::text IS NOT NULL AND NOT (SELECT yes FROM held)")
        return """
            held AS (
                SELECT ($13::text IS NOT NULL OR $17::bytea IS NOT NULL)
                    AND EXISTS (SELECT 1 FROM factors WHERE user_id = \(user) AND activated_at IS NOT NULL) AS yes),
            \(session.joined(separator: ",\n")),
            code AS (
                INSERT INTO authorization_codes (hash, client_id, redirect_uri, code_challenge, user_id,
                    session_id, scope, created_at, expires_at, provider, subject)
                SELECT $17, $18, $19, $20, \(user), $21, $22::json, $1, $23, $7, $8
                WHERE $17::bytea IS NOT NULL AND NOT (SELECT yes FROM held)),
            challenge AS (
                INSERT INTO factor_challenges (hash, user_id, purpose, plan, created_at, expires_at)
                SELECT $\(origin + 6), \(user), '\(FactorChallengePurpose.signIn.rawValue)', $\(origin + 7), $1,
                    $\(origin + 8)
                WHERE (SELECT yes FROM held) AND $\(origin + 6)::bytea IS NOT NULL),
            """
    }

    /// Binds the second-factor challenge (`open(for:origin:)`), after the origins.
    static func bindChallenge(_ v: Prepared.SignInValues, _ b: inout PostgresBindings) {
        b.append(v.challenge.map { ByteBuffer(bytes: $0.hash) })
        b.append(v.challenge?.plan)
        b.append(v.challenge?.expiresAt)
    }

    /// Binds the session's method, client address and user agent (`open(for:origin:)`), then the
    /// audit row's node, client address and user agent (`audit(user:type:origin:)`), last.
    static func bindOrigin(_ v: Prepared.SignInValues, _ b: inout PostgresBindings) {
        b.append(v.session?.method)
        b.append(v.session?.clientAddress)
        b.append(v.session?.userAgent)
        b.append(v.audit.node)
        b.append(v.audit.client.address)
        b.append(v.audit.client.userAgent)
    }

    /// The audit row's columns after its detail (`$25`): where it came from, bound at
    /// `$origin+3` to `$origin+5` (`bindOrigin`).
    static func auditOrigin(_ origin: Int) -> (columns: String, values: String) {
        ("node, client_address, user_agent", "$\(origin + 3), $\(origin + 4), $\(origin + 5)")
    }

    /// The facts of a spent jti and of a spent or unknown nonce, as `SignInFacts` names them.
    static let spentFacts = """
        CASE WHEN $2::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM jti) THEN '\(SignInFacts.Name.replayed.rawValue)' END,
        CASE WHEN $4::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM nonce) THEN '\(SignInFacts.Name.nonceInvalid.rawValue)' END,
        """

    /// Ends a statement: aborts it (`latchkey_refuse`, so nothing it wrote stays) when any of
    /// `facts` holds, with the names of those that do, comma-separated. Which refusal a client
    /// gets is not decided here but in `Verdicts.signIn`, from those names; `stale` and
    /// `changed` are this backend's own reasons to read and write again.
    static func refuseOn(_ facts: String) -> String {
        "latchkey_refuse(NULLIF(concat_ws(',', \(facts)), ''))"
    }

    /// Binds the shared values in their places and each statement's own `$5`, `$6`, `$11`, `$12`
    /// and `$24` between them (`fifth` binds `$5`: a flag in one, optional bytes in the other).
    static func bindings(
        _ v: Prepared.SignInValues, fifth: (inout PostgresBindings) -> Void, sixth: String, eleventh: String?,
        twelfth: String?, twentyFourth: String
    ) -> PostgresBindings {
        var b = PostgresBindings(capacity: 37)
        b.append(v.now)
        b.append(v.jti)
        b.append(v.jtiExpiresAt)
        b.append(v.nonce)
        fifth(&b)
        b.append(sixth)
        b.append(v.provider)
        b.append(v.subject)
        b.append(v.appID)
        b.append(v.granted)
        b.append(eleventh)
        b.append(twelfth)
        b.append(v.session?.id)
        b.append(v.session.map { ByteBuffer(bytes: $0.refreshTokenHash) })
        b.append(v.session?.createdAt)
        b.append(v.session?.expiresAt)
        b.append(v.code.map { ByteBuffer(bytes: $0.hash) })
        b.append(v.code?.clientID)
        b.append(v.code?.redirectURI)
        b.append(v.code?.codeChallenge)
        b.append(v.code?.sessionID)
        b.append(v.code?.scope)
        b.append(v.code?.expiresAt)
        b.append(twentyFourth)
        b.append(v.auditDetail)
        return b
    }
}

extension Prepared {
    /// What both sign-in statements bind the same way (`SignInParts`), from the login.
    struct SignInValues {
        var now: Date
        var jti: String?
        var jtiExpiresAt: Date?
        var nonce: String?
        var provider: String
        var subject: String
        var appID: String
        /// The identity's granted permissions, as JSON text.
        var granted: String
        var session: SessionValues?
        var code: CodeValues?
        /// The audit event's detail, as JSON text (the same for a first and a returning login).
        var auditDetail: String
        /// Where the audit event comes from.
        var audit: AuditContext
        /// Stored instead of the session or code when the user has an active second factor.
        var challenge: NewFactorChallenge?
    }

    /// The session a sign-in opens.
    struct SessionValues {
        var id: String
        var refreshTokenHash: Data
        var createdAt: Date
        var expiresAt: Date
        var method: String
        var clientAddress: String?
        var userAgent: String?
    }

    /// The authorization code an Easy Login sign-in stores (`scope` as JSON text).
    struct CodeValues {
        var hash: Data
        var clientID: String
        var redirectURI: String
        var codeChallenge: String
        var sessionID: String
        var scope: String
        var expiresAt: Date
    }

    /// A sign-in in one round trip, tried first (`PostgresStore.signIn`): it finds the identity
    /// itself and writes everything, for a first login (a new user, `$6`, with `$11` as its
    /// properties) or for a returning person whose stored properties need no merge, which the
    /// stamp tells without reading them (`$5`, `StorageRules.signInPropertiesStamp`; `NULL` when
    /// the sign-in merges nothing). Otherwise it refuses itself, writing nothing, naming what it
    /// found (`SignInParts.refuseOn`): `stale` (the properties need the read, merge and `SignIn`),
    /// `changed` (a race lost), `disabled`, or a spent jti or nonce. `$12` and `$24` are the audit
    /// types of a first and a returning login.
    ///
    /// Its one row: the refusal column, then the returning person's user and identity as found
    /// (all `NULL` for a first login).
    struct SignInDirect: PostgresPreparedStatement {
        static let name = "latchkey_sign_in_direct"
        /// What the statement may find: a refusal's facts, or a reason to read first.
        static let directFacts = """
            \(SignInParts.spentFacts)
            CASE WHEN (SELECT disabled FROM found) THEN '\(SignInFacts.Name.disabled.rawValue)' END,
            CASE WHEN NOT (SELECT fresh FROM found) THEN 'stale' END,
            CASE WHEN $26 AND NOT EXISTS (SELECT 1 FROM found) THEN '\(SignInFacts.Name.newIdentity.rawValue)' END,
            CASE WHEN NOT EXISTS (SELECT 1 FROM ident_update UNION ALL SELECT 1 FROM ident_insert)
                OR NOT EXISTS (SELECT 1 FROM user_kept UNION ALL SELECT 1 FROM user_insert)
                THEN 'changed' END
            """
        static let sql = """
            WITH found AS (
                SELECT u.id, u.created_at, u.updated_at, u.disabled, u.properties::text AS properties,
                    ($5::bytea IS NULL OR u.sign_in_stamp IS NOT DISTINCT FROM $5) AS fresh, i.app_id, i.first_seen,
                    (SELECT count(*) FROM identities j WHERE j.user_id = u.id) AS links
                FROM identities i JOIN users u ON u.id = i.user_id WHERE i.provider = $7 AND i.subject = $8),
            owner AS (SELECT coalesce((SELECT id FROM found), $6::text) AS id),
            \(SignInParts.spend)
            -- FOR SHARE: a disable or a property write committing meanwhile is waited for and seen
            -- (the stamp no longer matches), so neither is overtaken.
            user_kept AS (
                SELECT 1 FROM users WHERE id = (SELECT id FROM found) AND NOT disabled
                    AND ($5::bytea IS NULL OR sign_in_stamp = $5) FOR SHARE),
            ident_update AS (
                UPDATE identities SET granted = $10::json, last_seen = $1, revoked_at = NULL
                WHERE provider = $7 AND subject = $8 AND user_id = (SELECT id FROM found) RETURNING 1),
            user_insert AS (
                INSERT INTO users (id, created_at, updated_at, disabled, properties, sign_in_stamp)
                SELECT $6, $1, $1, false, $11::json, $5 WHERE NOT EXISTS (SELECT 1 FROM found) RETURNING 1),
            ident_insert AS (
                INSERT INTO identities (provider, subject, app_id, user_id, granted, first_seen, last_seen)
                SELECT $7, $8, $9, $6, $10::json, $1, $1 WHERE NOT EXISTS (SELECT 1 FROM found)
                ON CONFLICT (provider, subject) DO NOTHING RETURNING 1),
            \(SignInParts.open(for: "(SELECT id FROM owner)", origin: 27))
            audit AS (
                INSERT INTO audit_events (at, type, user_id, detail, \(SignInParts.auditOrigin(27).columns))
                SELECT $1, CASE WHEN EXISTS (SELECT 1 FROM found) THEN $24::text ELSE $12::text END, id, $25::json,
                    \(SignInParts.auditOrigin(27).values)
                FROM owner)
            SELECT \(SignInParts.refuseOn(directFacts)),
                f.id, f.created_at, f.updated_at, f.properties, f.app_id, f.first_seen, f.links, (SELECT yes FROM held)
            FROM (SELECT 1) AS one LEFT JOIN found f ON true
            """
        typealias Row = (Bool, String?, Date?, Date?, String?, String?, Date?, Int?, Bool)

        var values: SignInValues
        var stamp: Data?
        var newUserID: String
        var newUserProperties: String
        var createdAuditType: String
        var signedInAuditType: String
        /// `$26`: a new identity refuses the statement (`new_identity`) instead of creating a user.
        var joinsByBusiness: Bool

        func makeBindings() -> PostgresBindings {
            var b = SignInParts.bindings(
                values, fifth: { $0.append(stamp.map { ByteBuffer(bytes: $0) }) }, sixth: newUserID,
                eleventh: newUserProperties, twelfth: createdAuditType, twentyFourth: signedInAuditType)
            b.append(joinsByBusiness)
            SignInParts.bindOrigin(values, &b)
            SignInParts.bindChallenge(values, &b)
            return b
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// What a sign-in reads when the one statement could not do it alone (or fast paths are off,
    /// `PostgresStore.fastPaths`): the facts `Verdicts.signIn` decides on (a spent jti, an
    /// unknown or spent nonce: `NULL` when the sign-in has none), and the identity's user, all
    /// `NULL` when there is none yet.
    struct ReadSignIn: PostgresPreparedStatement {
        static let name = "latchkey_read_sign_in"
        static let sql = """
            SELECT EXISTS (
                    SELECT 1 FROM single_use WHERE $2::text IS NOT NULL AND kind = 'jti' AND value = $2 AND expires_at >= $1),
                $3::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM nonces WHERE value = $3 AND expires_at > $1),
                f.id, f.created_at, f.updated_at, f.disabled, f.properties, f.app_id, f.first_seen, f.links, f.sign_in_stamp
            FROM (SELECT 1) AS one LEFT JOIN (
                SELECT u.id, u.created_at, u.updated_at, u.disabled, u.properties::text AS properties, i.app_id,
                    i.first_seen, (SELECT count(*) FROM identities j WHERE j.user_id = u.id) AS links, u.sign_in_stamp
                FROM identities i JOIN users u ON u.id = i.user_id WHERE i.provider = $4 AND i.subject = $5) AS f ON true
            """
        typealias Row = (Bool, Bool, String?, Date?, Date?, Bool?, String?, String?, Date?, Int?, Data?)
        var now: Date
        var jti: String?
        var nonce: String?
        var provider: String
        var subject: String

        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings(capacity: 5)
            b.append(now)
            b.append(jti)
            b.append(nonce)
            b.append(provider)
            b.append(subject)
            return b
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A sign-in's write after its read (`PostgresStore.plan`), when the one-statement sign-in
    /// could not do it alone: the properties need a merge, or a race was lost. The parts a login
    /// does not need are switched off by their parameters (a `NULL` jti, nonce, session or code;
    /// `found` choosing update or insert; `NULL` properties when they do not change). It checks
    /// what the read found and ends through `SignInParts.refuseOn`, so when a check fails nothing
    /// it wrote stays.
    ///
    /// Parameters besides the shared ones: `$5` found, `$6` user id, `$11` properties to write
    /// (the merge, or a new user's), `$12` properties as read (a returning person's), `$24` audit
    /// type, `$26` the sign-in stamp to store (`NULL`: keep the stored one).
    struct SignIn: PostgresPreparedStatement {
        static let name = "latchkey_sign_in"
        /// What the statement may find: a refusal's facts, or that the read is out of date.
        static let writeFacts = """
            \(SignInParts.spentFacts)
            CASE WHEN $5 AND (SELECT disabled FROM users WHERE id = $6) THEN '\(SignInFacts.Name.disabled.rawValue)' END,
            CASE WHEN NOT EXISTS (SELECT 1 FROM ident_update UNION ALL SELECT 1 FROM ident_insert)
                OR NOT EXISTS (
                    SELECT 1 FROM user_update UNION ALL SELECT 1 FROM user_stamped UNION ALL SELECT 1 FROM user_kept
                    UNION ALL SELECT 1 FROM user_insert)
                THEN 'changed' END
            """
        static let sql = """
            WITH \(SignInParts.spend)
            ident_update AS (
                UPDATE identities SET granted = $10::json, last_seen = $1, revoked_at = NULL
                WHERE $5 AND provider = $7 AND subject = $8 AND user_id = $6 RETURNING 1),
            -- Each user CTE checks the properties as read, so a stamp never outlives what it says.
            user_update AS (
                UPDATE users SET properties = $11::json, updated_at = $1, sign_in_stamp = $26
                WHERE $5 AND $11::text IS NOT NULL AND id = $6 AND NOT disabled AND properties::text = $12
                RETURNING 1),
            user_stamped AS (
                UPDATE users SET sign_in_stamp = $26
                WHERE $5 AND $11::text IS NULL AND $26::bytea IS NOT NULL AND id = $6 AND NOT disabled
                    AND properties::text = $12
                RETURNING 1),
            -- FOR SHARE: a disable committing meanwhile is waited for and seen, so no session opens
            -- for a user whose sessions it just revoked.
            user_kept AS (
                SELECT 1 FROM users
                WHERE $5 AND $11::text IS NULL AND $26::bytea IS NULL AND id = $6 AND NOT disabled FOR SHARE),
            user_insert AS (
                INSERT INTO users (id, created_at, updated_at, disabled, properties, sign_in_stamp)
                SELECT $6, $1, $1, false, $11::json, $26 WHERE NOT $5 RETURNING 1),
            ident_insert AS (
                INSERT INTO identities (provider, subject, app_id, user_id, granted, first_seen, last_seen,
                    business_token)
                SELECT $7, $8, $9, $6, $10::json, $1, $1, $27 WHERE NOT $5
                ON CONFLICT (provider, subject) DO NOTHING RETURNING 1),
            \(SignInParts.open(for: "$6", origin: 28))
            audit AS (
                INSERT INTO audit_events (at, type, user_id, detail, \(SignInParts.auditOrigin(28).columns))
                VALUES ($1, $24, $6, $25::json, \(SignInParts.auditOrigin(28).values)))
            SELECT \(SignInParts.refuseOn(writeFacts)), (SELECT yes FROM held)
            """
        typealias Row = (Bool, Bool)

        var values: SignInValues
        var found: Bool
        var userID: String
        var properties: String?
        var propertiesRead: String?
        var auditType: String
        var stamp: Data?
        /// `$27`: Facebook's `token_for_business`, stored with a new identity.
        var businessToken: String?

        func makeBindings() -> PostgresBindings {
            var b = SignInParts.bindings(
                values, fifth: { $0.append(found) }, sixth: userID, eleventh: properties, twelfth: propertiesRead,
                twentyFourth: auditType)
            b.append(stamp.map { ByteBuffer(bytes: $0) })
            b.append(businessToken)
            SignInParts.bindOrigin(values, &b)
            SignInParts.bindChallenge(values, &b)
            return b
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}
