import Foundation
import LatchkeyServer
import PostgresNIO

extension PostgresStore {
    /// Session signing keys, newest first.
    package func signingKeys() async throws -> [StoredSigningKey] {
        try await withConnection("signing keys") { connection in
            try await connection.rows(
                "SELECT kid, private_key, created_at, retired_at FROM signing_keys ORDER BY created_at DESC"
            ).map { row in
                let (kid, key, created, retired) = try row.decode((String, Data, Date, Date?).self)
                return StoredSigningKey(kid: kid, privateKey: key, createdAt: created, retiredAt: retired)
            }
        }
    }

    /// Adds a key and retires the current ones, in one statement.
    package func addSigningKey(_ key: StoredSigningKey) async throws {
        try await withConnection("add signing key") { connection in
            try await connection.run(
                """
                WITH retired AS (UPDATE signing_keys SET retired_at = \(key.createdAt) WHERE retired_at IS NULL)
                INSERT INTO signing_keys (kid, private_key, created_at) VALUES (\(key.kid), \(key.privateKey), \(key.createdAt))
                """)
        }
    }

    /// Adds the first key. The table lock (which reads do not wait for) orders servers starting
    /// together: `NOT EXISTS` alone would let two concurrent inserts each see an empty table.
    package func addFirstSigningKey(_ key: StoredSigningKey) async throws -> Bool {
        try await transaction("add first signing key") { connection in
            try await connection.run("LOCK TABLE signing_keys IN EXCLUSIVE MODE")
            return try await !connection.rows(
                """
                INSERT INTO signing_keys (kid, private_key, created_at)
                SELECT \(key.kid), \(key.privateKey), \(key.createdAt) WHERE NOT EXISTS (SELECT 1 FROM signing_keys)
                RETURNING 1
                """
            ).isEmpty
        }
    }

    /// Replaces key material, all keys in one transaction.
    package func replaceSigningKeyMaterial(_ material: [String: Data]) async throws {
        try await transaction("replace signing key material") { connection in
            for (kid, bytes) in material {
                try await connection.run("UPDATE signing_keys SET private_key = \(bytes) WHERE kid = \(kid)")
            }
        }
    }
}
