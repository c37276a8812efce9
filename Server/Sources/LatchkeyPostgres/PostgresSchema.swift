/// The PostgreSQL schema, as numbered migrations applied in order and recorded in
/// `schema_migrations` (its own numbering: the SQLite schema's versions are unrelated).
///
/// Dates are `timestamptz` and JSON is `json` (kept as written: `jsonb` would reorder keys and
/// refuse `\u0000`, which a client's property may hold). Every table an expiry prunes has an
/// index on that date, so pruning never scans.
enum PostgresSchema {
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE users (
                id text PRIMARY KEY, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
                disabled boolean NOT NULL DEFAULT false, properties json NOT NULL DEFAULT '{}')
            """,
            """
            CREATE TABLE identities (
                provider text NOT NULL, subject text NOT NULL, app_id text NOT NULL,
                user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                granted json NOT NULL DEFAULT '[]', first_seen timestamptz NOT NULL, last_seen timestamptz NOT NULL,
                PRIMARY KEY (provider, subject))
            """,
            "CREATE INDEX identities_user ON identities(user_id)",
            """
            CREATE TABLE sessions (
                id text PRIMARY KEY, user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at timestamptz NOT NULL, expires_at timestamptz NOT NULL, revoked_at timestamptz)
            """,
            "CREATE INDEX sessions_user ON sessions(user_id)",
            "CREATE INDEX sessions_expiry ON sessions(expires_at)",
            "CREATE INDEX sessions_revoked ON sessions(revoked_at) WHERE revoked_at IS NOT NULL",
            """
            CREATE TABLE refresh_tokens (
                hash bytea PRIMARY KEY, session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                created_at timestamptz NOT NULL, expires_at timestamptz NOT NULL, used_at timestamptz)
            """,
            "CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id)",
            """
            CREATE TABLE single_use (
                kind text NOT NULL, value text NOT NULL, expires_at timestamptz NOT NULL, PRIMARY KEY (kind, value))
            """,
            "CREATE INDEX single_use_expiry ON single_use(expires_at)",
            "CREATE TABLE nonces (value text PRIMARY KEY, expires_at timestamptz NOT NULL)",
            "CREATE INDEX nonces_expiry ON nonces(expires_at)",
            """
            CREATE TABLE signing_keys (
                kid text PRIMARY KEY, private_key bytea NOT NULL, created_at timestamptz NOT NULL,
                retired_at timestamptz)
            """,
            """
            CREATE TABLE audit_events (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at timestamptz NOT NULL, type text NOT NULL,
                user_id text, detail json NOT NULL DEFAULT '{}')
            """,
            "CREATE INDEX audit_events_at ON audit_events(at)",
            """
            CREATE TABLE pending_authorizations (
                handle_hash bytea PRIMARY KEY, request json NOT NULL, expires_at timestamptz NOT NULL)
            """,
            "CREATE INDEX pending_authorizations_expiry ON pending_authorizations(expires_at)",
            """
            CREATE TABLE authorization_codes (
                hash bytea PRIMARY KEY, client_id text NOT NULL, redirect_uri text NOT NULL,
                code_challenge text NOT NULL, user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                session_id text NOT NULL, scope json NOT NULL DEFAULT '[]', created_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL, used_at timestamptz, redeemed boolean NOT NULL DEFAULT false)
            """,
            "CREATE INDEX authorization_codes_expiry ON authorization_codes(expires_at)",
            // A sign-in is one statement (`PostgresStore+SignIn.swift`); when one of its checks
            // fails, this aborts the statement, so nothing it wrote stays. NULL means "all good".
            """
            CREATE FUNCTION latchkey_refuse(reason text) RETURNS boolean LANGUAGE plpgsql AS $$
            BEGIN
                IF reason IS NULL THEN RETURN true; END IF;
                RAISE EXCEPTION USING ERRCODE = 'LK001', MESSAGE = reason;
            END $$
            """,
        ],
        [
            // The retry window: a spent token remembers its successor (`rotateRefreshToken`).
            "ALTER TABLE refresh_tokens ADD COLUMN successor_hash bytea"
        ],
        [
            // The stamp of the mapped properties the last sign-in merged
            // (`StorageRules.signInPropertiesStamp`): a returning person whose stamp is unchanged
            // signs in with one statement that never reads the properties (`SignInDirect`).
            "ALTER TABLE users ADD COLUMN sign_in_stamp bytea",
            // Whatever else writes the properties forgets the stamp, in the database itself, so no
            // writer can leave a stamp that no longer holds: a client's update, an operator's
            // `UPDATE`, or a server of an older version during a rolling upgrade.
            """
            CREATE FUNCTION latchkey_forget_sign_in_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                NEW.sign_in_stamp := NULL;
                RETURN NEW;
            END $$
            """,
            """
            CREATE TRIGGER users_forget_sign_in_stamp BEFORE UPDATE ON users FOR EACH ROW
            WHEN (OLD.properties::text IS DISTINCT FROM NEW.properties::text
                AND OLD.sign_in_stamp IS NOT DISTINCT FROM NEW.sign_in_stamp)
            EXECUTE FUNCTION latchkey_forget_sign_in_stamp()
            """,
        ],
        [
            // A user's audit events, newest first (`auditEvents(userID:limit:)`), one index range.
            "CREATE INDEX audit_events_user ON audit_events(user_id, id)"
        ],
        [
            // A token handed out again by a late retry (`Verdicts.refresh`): it gets no late retry itself.
            "ALTER TABLE refresh_tokens ADD COLUMN reissued_at timestamptz"
        ],
        [
            // Guests (`createGuest`); the partial index finds the unused ones to prune without a scan.
            "ALTER TABLE users ADD COLUMN anonymous boolean NOT NULL DEFAULT false",
            "CREATE INDEX users_guests ON users(created_at) WHERE anonymous",
            // Facebook's `token_for_business`: one person across the apps of one business.
            "ALTER TABLE identities ADD COLUMN business_token text",
            "CREATE INDEX identities_business ON identities(business_token) WHERE business_token IS NOT NULL",
            // A session's latest proof of a credential (NULL: its creation), for the
            // reauthentication window of `deleteUser`.
            "ALTER TABLE sessions ADD COLUMN authenticated_at timestamptz",
            // Background work that must survive restarts (`claimJobs`).
            """
            CREATE TABLE jobs (
                id text PRIMARY KEY, kind text NOT NULL, user_id text NOT NULL, payload json NOT NULL,
                created_at timestamptz NOT NULL, due_at timestamptz NOT NULL, attempts integer NOT NULL DEFAULT 0,
                lease_until timestamptz, last_error text)
            """,
            "CREATE INDEX jobs_due ON jobs(due_at)",
            // Deleting a user (an account deletion, a merge, a pruned guest) cascades to its codes.
            "CREATE INDEX authorization_codes_user ON authorization_codes(user_id)",
        ],
        [
            // A provider's refresh tokens, sealed, one per identity and client id: revoked when the
            // account or the identity goes (`StorageRules.revocationJobs`). Keyed by the identity,
            // not the user, so a merge moves them with their identity.
            """
            CREATE TABLE provider_tokens (
                provider text NOT NULL, subject text NOT NULL, client_id text NOT NULL, token bytea NOT NULL,
                updated_at timestamptz NOT NULL, PRIMARY KEY (provider, subject, client_id))
            """,
            // Pruning finds the tokens whose identity never came through their date.
            "CREATE INDEX provider_tokens_updated ON provider_tokens(updated_at)",
            // What a provider said out of band: the person revoked the app (until their next
            // sign-in), or stopped email forwarding.
            "ALTER TABLE identities ADD COLUMN revoked_at timestamptz",
            "ALTER TABLE identities ADD COLUMN email_disabled boolean NOT NULL DEFAULT false",
        ],
        [
            // Where a person is signed in (`sessions(userID:now:)`): how each session was opened,
            // by which identity (what a provider's deauthorization ends), from which client, and
            // its last refresh. NULL in a session opened before: its provenance is unknown.
            """
            ALTER TABLE sessions ADD COLUMN method text, ADD COLUMN provider text, ADD COLUMN subject text,
                ADD COLUMN client_address text, ADD COLUMN user_agent text, ADD COLUMN refreshed_at timestamptz
            """,
            // An Easy Login code opens its session later: it keeps the identity it was issued to.
            "ALTER TABLE authorization_codes ADD COLUMN provider text, ADD COLUMN subject text",
        ],
        [
            // Providers' data-deletion requests (`receiveDeletionRequest`): the public status page
            // reads one by its code; a repeated request finds the identity's newest; operators list
            // them by status.
            """
            CREATE TABLE deletion_requests (
                id text PRIMARY KEY, code text NOT NULL UNIQUE, provider text NOT NULL, subject text NOT NULL,
                app_id text NOT NULL, user_id text, policy text NOT NULL, property_keys json NOT NULL DEFAULT '[]',
                status text NOT NULL, reason text, held_data boolean, created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL)
            """,
            "CREATE INDEX deletion_requests_identity ON deletion_requests(provider, subject, created_at)",
            "CREATE INDEX deletion_requests_status ON deletion_requests(status, updated_at)",
            // At most one open request per identity, whatever the isolation level.
            """
            CREATE UNIQUE INDEX deletion_requests_open ON deletion_requests(provider, subject)
            WHERE status IN ('received', 'in_progress')
            """,
        ],
        [
            // Where each audit event came from (`AuditContext`): the node, the client's address and
            // user agent. NULL for an event recorded before, or by background work.
            "ALTER TABLE audit_events ADD COLUMN node text, ADD COLUMN client_address text, ADD COLUMN user_agent text"
        ],
        [
            // Second factors (`addFactor`…`attemptFactorChallenge`): each factor's secret sealed
            // (`FactorSecretSealing`) and the newest step a code of it was accepted for; recovery
            // codes as hashes; challenges by the hash of what the client holds; each user's wrong
            // codes in a row. All go with their user.
            """
            CREATE TABLE factors (
                id text PRIMARY KEY, user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                type text NOT NULL, display_name text, secret bytea NOT NULL, created_at timestamptz NOT NULL,
                activated_at timestamptz, last_step bigint, last_used_at timestamptz,
                failed_verifications integer NOT NULL DEFAULT 0)
            """,
            "CREATE INDEX factors_user ON factors(user_id)",
            """
            CREATE TABLE recovery_codes (
                user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE, hash bytea NOT NULL,
                created_at timestamptz NOT NULL, used_at timestamptz, PRIMARY KEY (user_id, hash))
            """,
            """
            CREATE TABLE factor_challenges (
                hash bytea PRIMARY KEY, user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                purpose text NOT NULL, session_id text, plan text NOT NULL, created_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL, attempts integer NOT NULL DEFAULT 0, spent_at timestamptz)
            """,
            "CREATE INDEX factor_challenges_expiry ON factor_challenges(expires_at)",
            "CREATE INDEX factor_challenges_user ON factor_challenges(user_id)",
            """
            CREATE TABLE factor_lockouts (
                user_id text PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, failures integer NOT NULL,
                locked_until timestamptz)
            """,
            // The second factor a session proved (its tokens' `amr` and `aal`), and the one proven
            // before an Easy Login code was issued (the session it opens keeps it).
            "ALTER TABLE sessions ADD COLUMN second_factor text",
            "ALTER TABLE authorization_codes ADD COLUMN second_factor text",
        ],
        [
            // Operators' keys (`createAdminKey`…): the secret's hash only.
            """
            CREATE TABLE admin_keys (
                id text PRIMARY KEY, name text NOT NULL, hash bytea NOT NULL, created_at timestamptz NOT NULL,
                last_used_at timestamptz, revoked_at timestamptz)
            """,
            // `searchUsers`: pages newest first walk this index; a term finds its users through
            // the primary key, the identities' subjects and the email: its JSON text (`->`, which
            // never unescapes, so a `\u0000` a provider sent cannot fail a write), lowered in ASCII
            // only (`translate`) as SQLite's `lower` does, so both backends find the same users.
            // The query repeats the expression exactly, or the index goes unused.
            "CREATE INDEX users_created ON users(created_at, id)",
            "CREATE INDEX users_email ON users((\(PostgresSchema.emailKey)))",
            "CREATE INDEX identities_subject ON identities(subject)",
        ],
        [
            // A console sign-out ends the key's console sessions (`endConsoleSessions`).
            "ALTER TABLE admin_keys ADD COLUMN console_generation integer NOT NULL DEFAULT 0"
        ],
        [
            // A session's latest step-up (`Verdicts.factorChange`), and the user id a recovery code
            // was hashed for when a merge moved it (SQLite's migration 17 says why).
            "ALTER TABLE sessions ADD COLUMN stepped_up_at timestamptz",
            "ALTER TABLE recovery_codes ADD COLUMN salt text",
        ],
    ]

    /// The indexed email: the property's JSON text lowered in ASCII only (what SQLite's `lower`
    /// does without ICU).
    static let emailKey = asciiLower("(properties -> 'email')::text")

    /// `text` lowered in ASCII only.
    static func asciiLower(_ text: String) -> String {
        "translate(\(text), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
    }
}
