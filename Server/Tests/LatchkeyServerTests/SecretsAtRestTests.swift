import Foundation
import Hummingbird
import HummingbirdTesting
import LatchkeyAPI
import LatchkeyPostgres
import LatchkeyShared
import Logging
import Testing

@testable import LatchkeySQLite
@testable import LatchkeyServer

/// Session signing keys sealed under the key-encryption key, and the files that hold them.
@Suite("Secrets at rest")
struct SecretsAtRestTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func configuration(kek: KeyEncryptionKey?, previous: [KeyEncryptionKey] = []) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.facebook.apps = [.init(id: Demo.appID, secret: Demo.secret)]
        configuration.http.publicURL = "http://latchkey.test"
        configuration.http.port = 0
        configuration.facebook.startupCheck = .off
        configuration.secrets.keyEncryptionKey = kek
        configuration.secrets.previousKeyEncryptionKeys = previous
        configuration.secrets.allowPlaintextSigningKeys = kek == nil
        configuration.clock = { now }
        return configuration
    }

    /// Builds (but does not run) the server on `store`, which loads, and maybe seals, the keys.
    static func start(_ configuration: ServerConfiguration, _ store: SQLiteStore) async throws -> JSONValue {
        // Sealing, migration and refusals log too: their lines are scanned like every server's.
        let logs = LogCapture()
        defer { logs.expectNoSecrets(kek: nil, configuration) }
        let application = try await buildApplication(
            configuration: configuration, store: store, logger: logs.logger(label: "latchkey"))
        return try await application.test(.router) { client in
            try await client.execute(uri: "/.well-known/jwks.json", method: .get).json()
        }
    }

    /// A store whose server has started once under a fresh key-encryption key.
    static func started() async throws -> (SQLiteStore, KeyEncryptionKey) {
        let store = try await SQLiteStore.open(.sqliteMemory)
        let kek = KeyEncryptionKey.generate().key
        _ = try await start(configuration(kek: kek), store)
        return (store, kek)
    }

    @Test("the server stores its signing key sealed: the database alone holds no usable key")
    func sealedOnFirstStart() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        let kek = KeyEncryptionKey.generate().key
        let jwks = try await Self.start(Self.configuration(kek: kek), store)
        let rows = try await store.signingKeys()
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(row.privateKey.count == SigningKeyProtection.sealedCount)
        #expect(row.privateKey.prefix(4) == Data("LKE1".utf8))
        // Opened with the KEK, it is the key the JWKS publishes.
        let raw = try SigningKeyProtection(current: kek).open(row.privateKey, kid: row.kid)
        let key = try SessionSigningKey(rawPrivateKey: raw, createdAt: Self.now, retiredAt: nil)
        #expect(jwks["keys"]?.arrayValue?.first == key.jwk)
        // Without it, or with another one, the server refuses to start and says what to set.
        await #expect { _ = try await Self.start(Self.configuration(kek: nil), store) } throws: {
            "\($0)".contains("LATCHKEY_KEY_ENCRYPTION_KEY_FILE") && "\($0)".contains(kek.id)
        }
        await #expect {
            _ = try await Self.start(Self.configuration(kek: KeyEncryptionKey.generate().key), store)
        } throws: { "\($0)".contains(kek.id) }
        try await store.close()
    }

    @Test(
        "plain keys of an older database are refused by a server with a KEK; `keys rewrap` seals them, keeping their kid"
    )
    func plainKeysMigrate() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        try await store.migrate()
        let plain = SessionSigningKey.generate(now: Self.now)
        try await store.addSigningKey(
            StoredSigningKey(kid: plain.kid, privateKey: plain.rawPrivateKey, createdAt: Self.now, retiredAt: nil))
        let kek = KeyEncryptionKey.generate().key
        // A server cannot tell an old database from keys replaced behind its back: it refuses.
        await #expect { _ = try await Self.start(Self.configuration(kek: kek), store) } throws: {
            "\($0)".contains(plain.kid) && "\($0)".contains("keys rewrap --seal-plain-keys")
        }
        #expect(try await store.signingKeys().first?.privateKey == plain.rawPrivateKey)
        // Routine re-wrapping refuses them too; the operator's one deliberate step seals them.
        await #expect {
            _ = try await resealSigningKeys(in: store, protection: SigningKeyProtection(current: kek))
        } throws: { "\($0)".contains("--seal-plain-keys") }
        #expect(
            try await resealSigningKeys(
                in: store, protection: SigningKeyProtection(current: kek), sealingPlainKeys: true) == 1)
        let jwks = try await Self.start(Self.configuration(kek: kek), store)
        #expect(jwks["keys"]?.arrayValue?.first?["kid"] == .string(plain.kid))
        let row = try #require(try await store.signingKeys().first)
        #expect(SigningKeyProtection.isSealed(row.privateKey))
        #expect(!row.privateKey.contains(plain.rawPrivateKey))
        #expect(try SigningKeyProtection(current: kek).open(row.privateKey, kid: row.kid) == plain.rawPrivateKey)
        try await store.close()
    }

    @Test(
        "every key replaced by plain ones while servers run: refused at the refresh, the ring kept, /ready 503 with why"
    )
    func everyKeyReplacedByPlainOnes() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        try await Stack.run(store: store, { $0.sessions.keyRefreshInterval = 0.1 }) { (stack: Stack) async throws in
            let before = try await stack.get("/.well-known/jwks.json").json()
            let kid = try #require(before["keys"]?.arrayValue?.first?["kid"]?.stringValue)
            #expect(try await stack.get("/ready").json()["signing_keys"] == "ok")
            // A database writer swaps in a key of its own, unencrypted, as the only key.
            let planted = SessionSigningKey.generate(now: stack.clock.now)
            try await store.database.run { db in try db.execute("DELETE FROM signing_keys") }
            try await store.addSigningKey(
                StoredSigningKey(
                    kid: planted.kid, privateKey: planted.rawPrivateKey, createdAt: stack.clock.now, retiredAt: nil))
            try await eventually("/ready reports the refused keys") {
                try await stack.get("/ready").status == .serviceUnavailable
            }
            let ready = try await stack.get("/ready").json()
            #expect(ready["status"] == "unavailable" && ready["signing_keys"] == "refused")
            // The public answer says what kind of trouble, not which key; the log says which and why.
            #expect(ready["signing_keys_reason"]?.stringValue == SessionKeys.refusalSummary)
            #expect(ready["signing_keys_reason"]?.stringValue?.contains(planted.kid) == false)
            // The planted key is never published nor used to sign.
            #expect(try await stack.get("/.well-known/jwks.json").json() == before)
            let body = try await stack.signIn(["accessToken": .string(try await stack.facebookToken("alice"))]).json()
            let access = try #require(body["session"]?["access_token"]?.stringValue)
            #expect(try KeyRotationTests.kid(access) == kid)
            #expect(
                stack.logs.all.contains {
                    $0.contains("latchkey.keys.refresh_failed") && $0.contains(planted.kid)
                        && $0.contains("unencrypted")
                })
        }
        try await store.close()
    }

    @Test("re-wrapping: started with a new KEK and the old one as previous, keys move to the new one")
    func rewrap() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        let old = KeyEncryptionKey.generate().key
        let new = KeyEncryptionKey.generate().key
        let first = try await Self.start(Self.configuration(kek: old), store)
        let second = try await Self.start(Self.configuration(kek: new, previous: [old]), store)
        #expect(first == second)
        // Now the new key alone opens them, and the old one no longer does.
        #expect(try await Self.start(Self.configuration(kek: new), store) == first)
        await #expect(throws: ConfigurationError.self) { _ = try await Self.start(Self.configuration(kek: old), store) }
        // The offline command does the same (`latchkey keys rewrap`).
        #expect(
            try await resealSigningKeys(in: store, protection: SigningKeyProtection(current: old, previous: [new])) == 1
        )
        #expect(try await Self.start(Self.configuration(kek: old), store) == first)
        try await store.close()
    }

    @Test("a sealed key altered, or moved onto another key's row, does not open")
    func tampering() async throws {
        let (store, kek) = try await Self.started()
        _ = try await rotateSigningKey(in: store, protection: SigningKeyProtection(current: kek), now: Self.now)
        let rows = try await store.signingKeys()
        #expect(rows.count == 2)
        var flipped = rows[0].privateKey
        flipped[flipped.count - 1] ^= 1
        try await store.replaceSigningKeyMaterial([rows[0].kid: flipped])
        await #expect { _ = try await Self.start(Self.configuration(kek: kek), store) } throws: {
            "\($0)".contains("altered")
        }
        // Another row's sealed key: the kid is authenticated data, so it does not open either.
        try await store.replaceSigningKeyMaterial([rows[0].kid: rows[1].privateKey])
        await #expect(throws: ConfigurationError.self) { _ = try await Self.start(Self.configuration(kek: kek), store) }
        try await store.close()
    }

    @Test("a plain key written beside sealed ones is refused, and never sealed into use")
    func plantedPlainKey() async throws {
        let (store, kek) = try await Self.started()
        let planted = SessionSigningKey.generate(now: Self.now.addingTimeInterval(1))
        try await store.addSigningKey(
            StoredSigningKey(
                kid: planted.kid, privateKey: planted.rawPrivateKey, createdAt: Self.now.addingTimeInterval(1),
                retiredAt: nil))
        await #expect { _ = try await Self.start(Self.configuration(kek: kek), store) } throws: {
            "\($0)".contains(planted.kid) && "\($0)".contains("unencrypted")
        }
        #expect(try await store.signingKeys().first { $0.kid == planted.kid }?.privateKey == planted.rawPrivateKey)
        try await store.close()
    }

    @Test("rotating without the key-encryption key cannot add a plain key beside sealed ones")
    func rotateWithoutKEK() async throws {
        let (store, _) = try await Self.started()
        await #expect(throws: ConfigurationError.self) {
            _ = try await rotateSigningKey(in: store, protection: SigningKeyProtection(current: nil), now: Self.now)
        }
        #expect(try await store.signingKeys().count == 1)
        try await store.close()
    }

    @Test("without a key-encryption key, the server refuses to start unless plain keys are allowed")
    func required() throws {
        var configuration = Self.configuration(kek: nil)
        configuration.secrets.allowPlaintextSigningKeys = false
        #expect { try configuration.validate() } throws: {
            "\($0)".contains("LATCHKEY_KEY_ENCRYPTION_KEY_FILE") && "\($0)".contains("generate-kek")
        }
        configuration.secrets.allowPlaintextSigningKeys = true
        try configuration.validate()
    }

    @Test("key-encryption keys parse from base64, base64url and hex; anything else is refused without echo")
    func parsing() throws {
        let bytes = Data((0..<32).map { UInt8($0 * 7 % 256) })
        let forms = [
            bytes.base64EncodedString(), Base64URL.encode(bytes), Hex.encode(bytes),
            " \(Hex.encode(bytes).uppercased())\n",
        ]
        let ids = try Set(forms.map { try KeyEncryptionKey(encoded: $0).id })
        #expect(ids.count == 1)
        for bad in ["too-short-secret-value", Hex.encode(bytes.prefix(16)), String(repeating: "z", count: 64)] {
            #expect { _ = try KeyEncryptionKey(encoded: bad) } throws: { !"\($0)".contains(bad) }
        }
        let key = try KeyEncryptionKey(encoded: forms[0])
        #expect(!"\(key)".contains(forms[0]) && !String(reflecting: key).contains(forms[1]))
    }

    @Test("the database file is created 0600, its new directories 0700, and WAL/SHM follow")
    func filePermissions() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-perm-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let path = base.appendingPathComponent("a/b/latchkey.sqlite").path
        let store = try await SQLiteStore.open(.sqliteFile(path))
        try await store.migrate()
        _ = try await store.signIn(StoreContractTests.login(subject: "s", userID: "u", sessionID: "x"), now: Self.now)
        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
        }
        #expect(try mode(path) == 0o600)
        #expect(try mode(path + "-wal") == 0o600)
        #expect(try mode(path + "-shm") == 0o600)
        #expect(try mode(base.appendingPathComponent("a").path) == 0o700)
        #expect(try mode(base.appendingPathComponent("a/b").path) == 0o700)
        try await store.close()
        // An existing database readable by others is made private when opened.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let reopened = try await SQLiteStore.open(.sqliteFile(path))
        #expect(try mode(path) == 0o600)
        try await reopened.close()
    }
}

/// Secrets read from files, and kept out of descriptions, errors and logs.
@Suite("Secret settings")
struct SecretSettingsTests {
    static func file(_ contents: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-secret-\(UUID().uuidString)")
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("every setting can come from NAME_FILE; secrets one a line")
    func fileSettings() throws {
        let kek = KeyEncryptionKey.generate()
        let secrets = try Self.file("first-secret\nsecond-secret\n")
        let kekFile = try Self.file(kek.encoded + "\n")
        defer { for path in [secrets, kekFile] { try? FileManager.default.removeItem(atPath: path) } }
        let configuration = try ServerConfiguration(settings: [
            "LATCHKEY_FACEBOOK_APP_ID": "1,2", "LATCHKEY_FACEBOOK_APP_SECRET_FILE": secrets,
            "LATCHKEY_KEY_ENCRYPTION_KEY_FILE": kekFile,
        ])
        #expect(
            configuration.facebook.apps == [
                .init(id: "1", secret: "first-secret"), .init(id: "2", secret: "second-secret"),
            ])
        #expect(configuration.secrets.keyEncryptionKey?.id == kek.key.id)
        try configuration.validate()

        #expect {
            _ = try ServerConfiguration(settings: [
                "LATCHKEY_FACEBOOK_APP_SECRET": "x", "LATCHKEY_FACEBOOK_APP_SECRET_FILE": secrets,
            ])
        } throws: { "\($0)".contains("not both") }
        #expect {
            _ = try ServerConfiguration(settings: ["LATCHKEY_KEY_ENCRYPTION_KEY_FILE": "/nonexistent/kek"])
        } throws: { "\($0)".contains("LATCHKEY_KEY_ENCRYPTION_KEY_FILE") }
        // A file named for the wrong setting (here the secrets file as the port) is never quoted.
        #expect { _ = try ServerConfiguration(settings: ["LATCHKEY_PORT_FILE": secrets]) } throws: {
            "\($0)".contains("LATCHKEY_PORT_FILE") && !"\($0)".contains("first-secret")
        }
        #expect {
            try ServerConfiguration(settings: [
                "LATCHKEY_FACEBOOK_APP_ID_FILE": secrets, "LATCHKEY_FACEBOOK_APP_SECRET": "s",
                "LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS": "true",
            ]).validate()
        } throws: { !"\($0)".contains("first-secret") }
        // A configuration file may name the _FILE forms.
        let env = try Self.file("LATCHKEY_FACEBOOK_APP_SECRET_FILE=\(secrets)\n")
        defer { try? FileManager.default.removeItem(atPath: env) }
        #expect(try ServerConfiguration.settings(fromFile: env) == ["LATCHKEY_FACEBOOK_APP_SECRET_FILE": secrets])
    }

    @Test("descriptions and dumps of apps, keys and configurations leave secrets out")
    func descriptions() async throws {
        let kek = KeyEncryptionKey.generate()
        let previous = KeyEncryptionKey.generate()
        var configuration = ServerConfiguration()
        configuration.facebook.apps = [.init(id: "1", secret: "s3cr3t-value")]
        configuration.secrets.keyEncryptionKey = kek.key
        configuration.secrets.previousKeyEncryptionKeys = [previous.key]
        configuration.database.url = "postgres://latchkey:db-pa55-word@db.internal:5432/latchkey?sslmode=require"
        configuration.facebook.graphURL = "https://graph-t0ken@graph.example/v21.0"
        let url = try PostgresURL(configuration.database.url)
        // What ServiceLifecycle logs of each service: the default printing of structs holding one.
        let store = try await SQLiteStore.open(.sqliteMemory)
        try await store.migrate()
        let (ring, _) = try await SessionKeyRing.load(
            from: store, protection: SigningKeyProtection(configuration), now: SecretsAtRestTests.now,
            accessTokenLifetime: 900)
        let service = SessionKeyRefresher(
            store: store, protection: SigningKeyProtection(configuration), keys: SessionKeys(ring),
            configuration: configuration, logger: Logger(label: "test"))
        var texts = [
            "\(configuration)", String(reflecting: configuration), "\(configuration.facebook.apps)",
            String(reflecting: configuration.facebook.apps[0]), "\(url)", String(reflecting: url), "\(service)",
            String(reflecting: service),
        ]
        // The PostgreSQL store holds the pool's configuration, password included (it connects lazily).
        let postgres = try PostgresStore(url: url, poolSize: 1, logger: Logger(label: "test"))
        texts += ["\(postgres)", String(reflecting: postgres)]
        // Each group of settings prints redacted on its own too: a log line may hold only one.
        let groups: [Any] = [configuration.http, configuration.database, configuration.facebook, configuration.secrets]
        texts += groups.map { "\($0)" } + groups.map { String(reflecting: $0) }
        for value in [configuration, url, service, postgres] + groups as [Any] {
            var dumped = ""
            dump(value, to: &dumped)
            texts.append(dumped)
        }
        for text in texts {
            for secret in ["s3cr3t-value", kek.encoded, previous.encoded, "db-pa55-word", "graph-t0ken"] {
                #expect(!text.contains(secret), "\(secret) in: \(text)")
            }
        }
        // Still useful to read: the database's host and user, the KEK's id.
        #expect("\(configuration)".contains("postgres://latchkey:***@db.internal:5432/latchkey"))
        #expect("\(configuration)".contains(kek.key.id))
        await postgres.close()
        try await store.close()
    }

    @Test(
        "at trace level, a whole sign-in and refresh logs no database password, app secret, key-encryption key or token"
    )
    func traceLogHoldsNoSecret() async throws {
        let password = "Db-Pa55-\(UUID().uuidString)"
        try await Stack.run({ $0.database.url = "postgres://latchkey:\(password)@127.0.0.1:5432/latchkey" }) {
            (stack: Stack) async throws in
            let token = try await stack.facebookToken("alice")
            let body = try await stack.signIn(["accessToken": .string(token)]).json()
            let access = try #require(body["session"]?["access_token"]?.stringValue)
            let refresh = try #require(body["session"]?["refresh_token"]?.stringValue)
            let refreshed = try await stack.postForm(
                "/v1/oauth/token", [("grant_type", "refresh_token"), ("refresh_token", refresh)])
            #expect(refreshed.status == .ok)
            #expect(try await stack.get("/v1/users/me", bearer: access).status == .ok)
            // The service descriptions, where the password was found, are in what is scanned.
            #expect(stack.logs.all.contains { $0.contains("SessionKeyRefresher") && $0.contains("127.0.0.1:5432") })
            let secrets = [password, token, refresh, access, Demo.secret]
            let leaks = SecretScan.findings(in: stack.logs.all, secrets: secrets)
            #expect(leaks.isEmpty, "secrets in the log:\n\(leaks.joined(separator: "\n"))")
            // (The key-encryption key is among what every Stack's own scan looks for when it ends.)
        }
    }

    @Test("a database URL is printed with its password redacted")
    func redaction() {
        #expect(
            DatabaseLocation.redacted("postgres://app:hunter2@db:5432/x?sslmode=require")
                == "postgres://app:***@db:5432/x?sslmode=require")
        #expect(
            DatabaseLocation.redacted("postgres://db/x?user=a&password=hunter2")
                == "postgres://db/x?user=a&password=***")
        #expect(DatabaseLocation.redacted("sqlite:/var/lib/latchkey.sqlite") == "sqlite:/var/lib/latchkey.sqlite")
        #expect(DatabaseLocation.redacted("postgres://app:pa/ss@w?rd#x@db/x") == "postgres://app:***@db/x")
        #expect(DatabaseLocation.redacted("https://ghp_token123@db/x") == "https://***@db/x")
        #expect(
            DatabaseLocation.redacted("postgres://db/x?sslpassword=a&pwd=b&mode=c")
                == "postgres://db/x?sslpassword=***&pwd=***&mode=c")
        #expect(DatabaseLocation.redacted("app:hunter2@db/x") == "app:***@db/x")
        #expect { _ = try DatabaseLocation("mysql://app:hunter2@db/x") } throws: { !"\($0)".contains("hunter2") }
    }

    @Test("the log scan catches what it must: tokens, proofs, app tokens and known secrets")
    func scanCatchesLeaks() {
        let clean = [
            "info [LatchkeyServer] latchkey.signin hb.request.id=cac603264222a685a0f21513d1fe5ba0 latchkey.user.id=OdMpSfMPHrTr5IDihLeV"
        ]
        #expect(SecretScan.findings(in: clean, secrets: ["demo-app-secret-change-me"]).isEmpty)
        for leak in [
            "x=eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1In0.sig", "token EAA" + String(repeating: "b", count: 40),
            "url /debug_token?access_token=100000000000001|demo", "proof " + String(repeating: "ab", count: 32),
            "refresh P26DncQJ7d0bYx1VQxWdQj5y5n8j3mGfQm9ZkL2tH1c", "cause the demo-app-secret-change-me",
        ] {
            #expect(!SecretScan.findings(in: [leak], secrets: ["demo-app-secret-change-me"]).isEmpty, "\(leak)")
        }
    }
}
