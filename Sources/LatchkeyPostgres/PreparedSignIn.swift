import Foundation
import NIOCore
import PostgresNIO

extension Prepared {
    /// A sign-in's write, one fixed statement for every kind of sign-in (`PostgresStore.plan`):
    /// the parts a login does not need are switched off by their parameters (a `NULL` jti, nonce,
    /// session or code; `found` choosing update or insert; `NULL` properties when they do not
    /// change), so the statement is prepared once per connection like the reads. The same checks
    /// as ever end it through `latchkey_refuse`, so when one fails nothing it wrote stays.
    ///
    /// Parameters: `$1` now, `$2`/`$3` jti and its expiry, `$4` server nonce, `$5` found,
    /// `$6` user id, `$7`–`$10` identity (provider, subject, app, granted), `$11` properties to
    /// write (the merge, or a new user's), `$12` properties as read (when they change), `$13`–`$16`
    /// session (id, refresh token hash, created, expires), `$17`–`$23` authorization code (hash,
    /// client, redirect URI, challenge, the session it opens when redeemed, scope, expiry),
    /// `$24`/`$25` audit type and detail.
    struct SignIn: PostgresPreparedStatement {
        static let name = "latchkey_sign_in"
        static let sql = """
            WITH jti AS (
                INSERT INTO single_use (kind, value, expires_at) SELECT 'jti', $2, $3 WHERE $2::text IS NOT NULL
                ON CONFLICT (kind, value) DO UPDATE SET expires_at = EXCLUDED.expires_at
                WHERE single_use.expires_at < $1 RETURNING 1),
            nonce AS (DELETE FROM nonces WHERE $4::text IS NOT NULL AND value = $4 AND expires_at > $1 RETURNING 1),
            ident_update AS (
                UPDATE identities SET granted = $10::json, last_seen = $1
                WHERE $5 AND provider = $7 AND subject = $8 AND user_id = $6 RETURNING 1),
            user_update AS (
                UPDATE users SET properties = $11::json, updated_at = $1
                WHERE $5 AND $12::text IS NOT NULL AND id = $6 AND NOT disabled AND properties::text = $12
                RETURNING 1),
            -- FOR SHARE: a disable committing meanwhile is waited for and seen, so no session opens
            -- for a user whose sessions it just revoked.
            user_kept AS (SELECT 1 FROM users WHERE $5 AND $12::text IS NULL AND id = $6 AND NOT disabled FOR SHARE),
            user_insert AS (
                INSERT INTO users (id, created_at, updated_at, disabled, properties)
                SELECT $6, $1, $1, false, $11::json WHERE NOT $5 RETURNING 1),
            ident_insert AS (
                INSERT INTO identities (provider, subject, app_id, user_id, granted, first_seen, last_seen)
                SELECT $7, $8, $9, $6, $10::json, $1, $1 WHERE NOT $5
                ON CONFLICT (provider, subject) DO NOTHING RETURNING 1),
            sess AS (
                INSERT INTO sessions (id, user_id, created_at, expires_at)
                SELECT $13, $6, $15, $16 WHERE $13::text IS NOT NULL),
            tok AS (
                INSERT INTO refresh_tokens (hash, session_id, created_at, expires_at)
                SELECT $14, $13, $15, $16 WHERE $13::text IS NOT NULL),
            code AS (
                INSERT INTO authorization_codes (hash, client_id, redirect_uri, code_challenge, user_id,
                    session_id, scope, created_at, expires_at)
                SELECT $17, $18, $19, $20, $6, $21, $22::json, $1, $23 WHERE $17::bytea IS NOT NULL),
            audit AS (INSERT INTO audit_events (at, type, user_id, detail) VALUES ($1, $24, $6, $25::json))
            SELECT latchkey_refuse(CASE
                WHEN $2::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM jti) THEN 'replayed'
                WHEN $4::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM nonce) THEN 'nonce_invalid'
                WHEN NOT EXISTS (SELECT 1 FROM ident_update UNION ALL SELECT 1 FROM ident_insert)
                    OR NOT EXISTS (
                        SELECT 1 FROM user_update UNION ALL SELECT 1 FROM user_kept UNION ALL SELECT 1 FROM user_insert)
                    THEN 'changed'
            END)
            """
        typealias Row = Void

        var now: Date
        var jti: String?
        var jtiExpiresAt: Date?
        var nonce: String?
        var found: Bool
        var userID: String
        var provider: String
        var subject: String
        var appID: String
        var granted: String
        var properties: String?
        var propertiesRead: String?
        var sessionID: String?
        var refreshTokenHash: Data?
        var sessionCreatedAt: Date?
        var sessionExpiresAt: Date?
        var codeHash: Data?
        var codeClientID: String?
        var codeRedirectURI: String?
        var codeChallenge: String?
        var codeSessionID: String?
        var codeScope: String?
        var codeExpiresAt: Date?
        var auditType: String
        var auditDetail: String

        func makeBindings() -> PostgresBindings {
            var b = PostgresBindings(capacity: 25)
            b.append(now)
            b.append(jti)
            b.append(jtiExpiresAt)
            b.append(nonce)
            b.append(found)
            b.append(userID)
            b.append(provider)
            b.append(subject)
            b.append(appID)
            b.append(granted)
            b.append(properties)
            b.append(propertiesRead)
            b.append(sessionID)
            b.append(refreshTokenHash.map { ByteBuffer(bytes: $0) })
            b.append(sessionCreatedAt)
            b.append(sessionExpiresAt)
            b.append(codeHash.map { ByteBuffer(bytes: $0) })
            b.append(codeClientID)
            b.append(codeRedirectURI)
            b.append(codeChallenge)
            b.append(codeSessionID)
            b.append(codeScope)
            b.append(codeExpiresAt)
            b.append(auditType)
            b.append(auditDetail)
            return b
        }

        func decodeRow(_ row: PostgresRow) {}
    }
}
