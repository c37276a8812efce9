/// The schema, as numbered migrations applied in order and recorded in `schema_migrations`.
enum SQLiteSchema {
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY, created_at REAL NOT NULL, updated_at REAL NOT NULL,
                disabled INTEGER NOT NULL DEFAULT 0, properties TEXT NOT NULL DEFAULT '{}')
            """,
            """
            CREATE TABLE identities (
                provider TEXT NOT NULL, subject TEXT NOT NULL, app_id TEXT NOT NULL,
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                granted TEXT NOT NULL DEFAULT '[]', first_seen REAL NOT NULL, last_seen REAL NOT NULL,
                PRIMARY KEY (provider, subject))
            """,
            "CREATE INDEX identities_user ON identities(user_id)",
            """
            CREATE TABLE sessions (
                id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                created_at REAL NOT NULL, revoked_at REAL)
            """,
            "CREATE INDEX sessions_user ON sessions(user_id)",
            """
            CREATE TABLE refresh_tokens (
                hash BLOB PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                created_at REAL NOT NULL, expires_at REAL NOT NULL, used_at REAL)
            """,
            "CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id)",
            """
            CREATE TABLE single_use (
                kind TEXT NOT NULL, value TEXT NOT NULL, expires_at REAL NOT NULL, PRIMARY KEY (kind, value))
            """,
            "CREATE INDEX single_use_expiry ON single_use(expires_at)",
            "CREATE TABLE nonces (value TEXT PRIMARY KEY, expires_at REAL NOT NULL)",
            """
            CREATE TABLE signing_keys (
                kid TEXT PRIMARY KEY, private_key BLOB NOT NULL, created_at REAL NOT NULL, retired_at REAL)
            """,
            """
            CREATE TABLE audit_events (
                id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, type TEXT NOT NULL, user_id TEXT,
                detail TEXT NOT NULL DEFAULT '{}')
            """,
        ],
        [
            // Easy Login: requests waiting for Facebook, and the codes handed to apps.
            "CREATE TABLE pending_authorizations (handle_hash BLOB PRIMARY KEY, request TEXT NOT NULL, expires_at REAL NOT NULL)",
            "CREATE INDEX pending_authorizations_expiry ON pending_authorizations(expires_at)",
            """
            CREATE TABLE authorization_codes (
                hash BLOB PRIMARY KEY, client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL,
                code_challenge TEXT NOT NULL, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                session_id TEXT NOT NULL, scope TEXT NOT NULL DEFAULT '[]', created_at REAL NOT NULL,
                expires_at REAL NOT NULL, used_at REAL, redeemed INTEGER NOT NULL DEFAULT 0)
            """,
            "CREATE INDEX authorization_codes_expiry ON authorization_codes(expires_at)",
        ],
        [
            // Pruning (`SQLiteStore.prune`) finds what it deletes through an index, never a scan.
            "CREATE INDEX nonces_expiry ON nonces(expires_at)",
            "CREATE INDEX audit_events_at ON audit_events(at)",
            // A session ends when its newest refresh token expires: kept on the session, renewed by
            // each rotation, so ended sessions are one index range away.
            "ALTER TABLE sessions ADD COLUMN expires_at REAL",
            """
            UPDATE sessions SET expires_at = COALESCE(
                (SELECT MAX(r.expires_at) FROM refresh_tokens r WHERE r.session_id = sessions.id), created_at)
            """,
            "CREATE INDEX sessions_expiry ON sessions(expires_at)",
            // Partial: most sessions are never revoked, and need no entry.
            "CREATE INDEX sessions_revoked ON sessions(revoked_at) WHERE revoked_at IS NOT NULL",
        ],
        [
            // The retry window: a spent token remembers its successor (`rotateRefreshToken`).
            "ALTER TABLE refresh_tokens ADD COLUMN successor_hash BLOB"
        ],
        [
            // A user's audit events, newest first (`auditEvents(userID:limit:)`), one index range.
            "CREATE INDEX audit_events_user ON audit_events(user_id, id)"
        ],
        [
            // A token handed out again by a late retry (`Verdicts.refresh`): it gets no late retry itself.
            "ALTER TABLE refresh_tokens ADD COLUMN reissued_at REAL"
        ],
        [
            // Guests (`createGuest`); the partial index finds the unused ones to prune without a scan.
            "ALTER TABLE users ADD COLUMN anonymous INTEGER NOT NULL DEFAULT 0",
            "CREATE INDEX users_guests ON users(created_at) WHERE anonymous = 1",
            // Facebook's `token_for_business`: one person across the apps of one business.
            "ALTER TABLE identities ADD COLUMN business_token TEXT",
            "CREATE INDEX identities_business ON identities(business_token) WHERE business_token IS NOT NULL",
            // A session's latest proof of a credential (NULL: its creation), for the
            // reauthentication window of `deleteUser`.
            "ALTER TABLE sessions ADD COLUMN authenticated_at REAL",
            // Background work that must survive restarts (`claimJobs`).
            """
            CREATE TABLE jobs (
                id TEXT PRIMARY KEY, kind TEXT NOT NULL, user_id TEXT NOT NULL, payload TEXT NOT NULL,
                created_at REAL NOT NULL, due_at REAL NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
                lease_until REAL, last_error TEXT)
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
                provider TEXT NOT NULL, subject TEXT NOT NULL, client_id TEXT NOT NULL, token BLOB NOT NULL,
                updated_at REAL NOT NULL, PRIMARY KEY (provider, subject, client_id))
            """,
            // Pruning finds the tokens whose identity never came through their date.
            "CREATE INDEX provider_tokens_updated ON provider_tokens(updated_at)",
            // What a provider said out of band: the person revoked the app (until their next
            // sign-in), or stopped email forwarding.
            "ALTER TABLE identities ADD COLUMN revoked_at REAL",
            "ALTER TABLE identities ADD COLUMN email_disabled INTEGER NOT NULL DEFAULT 0",
        ],
        [
            // Where a person is signed in (`sessions(userID:now:)`): how each session was opened,
            // by which identity (what a provider's deauthorization ends), from which client, and
            // its last refresh. NULL in a session opened before: its provenance is unknown.
            "ALTER TABLE sessions ADD COLUMN method TEXT",
            "ALTER TABLE sessions ADD COLUMN provider TEXT",
            "ALTER TABLE sessions ADD COLUMN subject TEXT",
            "ALTER TABLE sessions ADD COLUMN client_address TEXT",
            "ALTER TABLE sessions ADD COLUMN user_agent TEXT",
            "ALTER TABLE sessions ADD COLUMN refreshed_at REAL",
            // An Easy Login code opens its session later: it keeps the identity it was issued to.
            "ALTER TABLE authorization_codes ADD COLUMN provider TEXT",
            "ALTER TABLE authorization_codes ADD COLUMN subject TEXT",
        ],
        [
            // Providers' data-deletion requests (`receiveDeletionRequest`): the public status page
            // reads one by its code; a repeated request finds the identity's newest; operators list
            // them by status.
            """
            CREATE TABLE deletion_requests (
                id TEXT PRIMARY KEY, code TEXT NOT NULL UNIQUE, provider TEXT NOT NULL, subject TEXT NOT NULL,
                app_id TEXT NOT NULL, user_id TEXT, policy TEXT NOT NULL, property_keys TEXT NOT NULL DEFAULT '[]',
                status TEXT NOT NULL, reason TEXT, held_data INTEGER, created_at REAL NOT NULL,
                updated_at REAL NOT NULL)
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
            "ALTER TABLE audit_events ADD COLUMN node TEXT",
            "ALTER TABLE audit_events ADD COLUMN client_address TEXT",
            "ALTER TABLE audit_events ADD COLUMN user_agent TEXT",
        ],
        [
            // Second factors (`addFactor`…`attemptFactorChallenge`): each factor's secret sealed
            // (`FactorSecretSealing`) and the newest step a code of it was accepted for; recovery
            // codes as hashes; challenges by the hash of what the client holds; each user's wrong
            // codes in a row. All go with their user.
            """
            CREATE TABLE factors (
                id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                type TEXT NOT NULL, display_name TEXT, secret BLOB NOT NULL, created_at REAL NOT NULL,
                activated_at REAL, last_step INTEGER, last_used_at REAL,
                failed_verifications INTEGER NOT NULL DEFAULT 0)
            """,
            "CREATE INDEX factors_user ON factors(user_id)",
            """
            CREATE TABLE recovery_codes (
                user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, hash BLOB NOT NULL,
                created_at REAL NOT NULL, used_at REAL, PRIMARY KEY (user_id, hash))
            """,
            """
            CREATE TABLE factor_challenges (
                hash BLOB PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                purpose TEXT NOT NULL, session_id TEXT, plan TEXT NOT NULL, created_at REAL NOT NULL,
                expires_at REAL NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, spent_at REAL)
            """,
            "CREATE INDEX factor_challenges_expiry ON factor_challenges(expires_at)",
            "CREATE INDEX factor_challenges_user ON factor_challenges(user_id)",
            """
            CREATE TABLE factor_lockouts (
                user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, failures INTEGER NOT NULL,
                locked_until REAL)
            """,
            // The second factor a session proved (its tokens' `amr` and `aal`), and the one proven
            // before an Easy Login code was issued (the session it opens keeps it).
            "ALTER TABLE sessions ADD COLUMN second_factor TEXT",
            "ALTER TABLE authorization_codes ADD COLUMN second_factor TEXT",
        ],
        [
            // Operators' keys (`createAdminKey`…): the secret's hash only.
            """
            CREATE TABLE admin_keys (
                id TEXT PRIMARY KEY, name TEXT NOT NULL, hash BLOB NOT NULL, created_at REAL NOT NULL,
                last_used_at REAL, revoked_at REAL)
            """,
            // `searchUsers`: pages newest first walk this index; a term finds its users through
            // the primary key, the identities' subjects and the email: its JSON text, lowered in
            // ASCII (the same expression as the query's, or the index goes unused).
            "CREATE INDEX users_created ON users(created_at, id)",
            "CREATE INDEX users_email ON users(lower(properties -> '$.email'))",
            "CREATE INDEX identities_subject ON identities(subject)",
        ],
        [
            // A console sign-out ends the key's console sessions (`endConsoleSessions`).
            "ALTER TABLE admin_keys ADD COLUMN console_generation INTEGER NOT NULL DEFAULT 0"
        ],
        [
            // A session's latest step-up: a recent sign-in for changes of a second factor
            // (`Verdicts.factorChange`), not for the other changes of a way in.
            "ALTER TABLE sessions ADD COLUMN stepped_up_at REAL",
            // The user id a recovery code was hashed for (NULL: its row's user): a merge moves a
            // person's codes to another account, and a hash cannot be made again without the code.
            "ALTER TABLE recovery_codes ADD COLUMN salt TEXT",
        ],
    ]
}
