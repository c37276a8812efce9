import Foundation
import NIOCore
import PostgresNIO

/// The fixed statements on the hot paths (a sign-in's read, `/users/me`, a refresh), prepared
/// once per connection by the driver: each later run sends only Bind and Execute, so the server
/// neither parses nor plans the text again and the node decodes no row description.
///
/// Measured with `scripts/bench --database postgres` (docs/performance.md): PostgreSQL's CPU per
/// refresh fell from 655–717 to 334–362 µs and per `GET /v1/users/me` from 211–222 to 68–100;
/// the node's own CPU moved little. The sign-in's statements are too (`SignInDirect` and `SignIn`,
/// their own file).
enum Prepared {}

extension PostgresBindings {
    /// `values` bound in order as `$1`, `$2`, …: one line for a statement with no optional value.
    static func of<each Value: PostgresNonThrowingEncodable>(_ values: repeat each Value) -> PostgresBindings {
        var bindings = PostgresBindings()
        repeat bindings.append(each values)
        return bindings
    }
}

extension Prepared {
    /// A user with its identities (`PostgresStore.userColumns`, one row per identity).
    struct LoadUser: PostgresPreparedStatement {
        static let name = "latchkey_load_user"
        static let sql = """
            SELECT \(PostgresStore.userColumns) FROM users u LEFT JOIN identities i ON i.user_id = u.id WHERE u.id = $1
            """
        typealias Row = PostgresRow
        var userID: String

        func makeBindings() -> PostgresBindings { .of(userID) }

        func decodeRow(_ row: PostgresRow) -> Row { row }
    }

    /// The user of an active session with its identities (`PostgresStore.userColumns`).
    struct ActiveUser: PostgresPreparedStatement {
        static let name = "latchkey_active_user"
        static let sql = """
            SELECT \(PostgresStore.userColumns)
            FROM users u JOIN sessions s ON s.user_id = u.id AND s.id = $2 AND s.revoked_at IS NULL
            LEFT JOIN identities i ON i.user_id = u.id
            WHERE u.id = $1 AND NOT u.disabled
            """
        typealias Row = PostgresRow
        var userID: String
        var sessionID: String

        func makeBindings() -> PostgresBindings { .of(userID, sessionID) }

        func decodeRow(_ row: PostgresRow) -> Row { row }
    }

    /// One row when the session is active and its user enabled.
    struct SessionActive: PostgresPreparedStatement {
        static let name = "latchkey_session_active"
        static let sql = """
            SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
            WHERE s.id = $1 AND s.revoked_at IS NULL AND NOT u.disabled
            """
        typealias Row = Void
        var sessionID: String

        func makeBindings() -> PostgresBindings { .of(sessionID) }

        func decodeRow(_ row: PostgresRow) {}
    }

    /// The session a refresh token belongs to, whether the token was spent and the session ended.
    struct RefreshFamily: PostgresPreparedStatement {
        static let name = "latchkey_refresh_family"
        static let sql = """
            SELECT r.session_id, r.used_at IS NOT NULL, s.revoked_at IS NOT NULL
            FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE r.hash = $1
            """
        typealias Row = (String, Bool, Bool)
        var hash: Data

        func makeBindings() -> PostgresBindings { .of(ByteBuffer(bytes: hash)) }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A refresh token's spend, its successor and the session's renewal (`rotateRefreshToken`):
    /// the spent token's session and user, or no row.
    struct RotateRefresh: PostgresPreparedStatement {
        static let name = "latchkey_rotate_refresh"
        static let sql = """
            WITH spent AS (
                UPDATE refresh_tokens r SET used_at = $1, successor_hash = $2 FROM sessions s, users u
                WHERE r.hash = $3 AND r.used_at IS NULL AND r.expires_at > $1
                    AND s.id = r.session_id AND s.revoked_at IS NULL AND u.id = s.user_id AND NOT u.disabled
                RETURNING r.session_id, s.user_id, u.anonymous, s.method, s.second_factor),
            successor AS (
                INSERT INTO refresh_tokens (hash, session_id, created_at, expires_at)
                SELECT $2, session_id, $1, $4 FROM spent),
            renewed AS (UPDATE sessions SET expires_at = $4, refreshed_at = $1 WHERE id IN (SELECT session_id FROM spent))
            SELECT session_id, user_id, anonymous, method, second_factor FROM spent
            """
        typealias Row = (String, String, Bool, String?, String?)
        var now: Date
        var newHash: Data
        var hash: Data
        var newExpiresAt: Date

        func makeBindings() -> PostgresBindings {
            .of(now, ByteBuffer(bytes: newHash), ByteBuffer(bytes: hash), newExpiresAt)
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A server-issued nonce (Limited Login asks for one before each sign-in).
    struct StoreNonce: PostgresPreparedStatement {
        static let name = "latchkey_store_nonce"
        static let sql = "INSERT INTO nonces (value, expires_at) VALUES ($1, $2)"
        typealias Row = Void
        var nonce: String
        var expiresAt: Date

        func makeBindings() -> PostgresBindings { .of(nonce, expiresAt) }

        func decodeRow(_ row: PostgresRow) {}
    }
}
