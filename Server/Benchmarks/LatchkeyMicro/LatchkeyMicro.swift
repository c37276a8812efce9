import Benchmark
import Crypto
import Foundation
import LatchkeyAPI
import LatchkeySQLite
import LatchkeyServer
import _CryptoExtras

/// The server's hot paths without HTTP around them: id-token verification, session-token signing
/// and verification, field mapping, and the storage upsert of a repeat login.
/// Run: `LATCHKEY_BENCHMARKS=1 swift package benchmark` (docs/performance.md).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.cpuTotal, .wallClock, .mallocCountTotal, .throughput], maxDuration: .seconds(3),
        maxIterations: 1_000_000)
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    Benchmark("Limited Login id-token verification (RS256 + claims)") {
        (benchmark: Benchmark, fixture: IDTokenFixture) in
        for _ in benchmark.scaledIterations {
            blackHole(try await fixture.verifier.verify(fixture.token, nonce: "bench-nonce"))
        }
    } setup: {
        try await IDTokenFixture.make(now: now)
    }

    Benchmark("session access token: ES256 sign") { (benchmark: Benchmark, signer: BenchmarkSupport.SessionSigner) in
        for _ in benchmark.scaledIterations {
            blackHole(try signer.sign(userID: "user-1", sessionID: "session-1", now: now))
        }
    } setup: {
        try BenchmarkSupport.SessionSigner(now: now)
    }

    Benchmark("session access token: ES256 verify (signature + claims)") {
        (benchmark: Benchmark, fixture: SignedToken) in
        for _ in benchmark.scaledIterations {
            blackHole(try fixture.signer.verifyUncached(fixture.token, now: now))
        }
    } setup: {
        try SignedToken.make(now: now)
    }

    Benchmark("session access token: check of a token already verified (cache hit)") {
        (benchmark: Benchmark, fixture: SignedToken) in
        for _ in benchmark.scaledIterations {
            blackHole(try fixture.signer.verify(fixture.token, now: now))
        }
    } setup: {
        try SignedToken.make(now: now)
    }

    Benchmark("field mapping of a Graph /me answer") { benchmark in
        let me: [String: JSONValue] = [
            "id": "1234", "name": "Alice Liddell", "first_name": "Alice", "last_name": "Liddell",
            "email": "alice@example.com",
            "picture": ["data": ["url": "https://example.com/p.png", "is_silhouette": false]],
            "location": ["id": "1", "name": "London"], "age_range": ["min": 21],
        ]
        let mapping = [
            "name": "name", "first_name": "firstName", "last_name": "lastName", "email": "email",
            "picture": "picture", "location": "city", "age_range": "ageRange",
        ]
        for _ in benchmark.scaledIterations {
            blackHole(BenchmarkSupport.mapProfile(me, mapping: mapping))
        }
    }

    Benchmark("storage: repeat-login upsert (SQLite in memory)") { (benchmark: Benchmark, store: SQLiteStore) in
        for _ in benchmark.scaledIterations {
            // Session ids must be unique across the runs of this closure, not just its iterations.
            blackHole(try await store.signIn(StoreFixture.login(session: UUID().uuidString, now: now), now: now))
        }
    } setup: {
        let store = try await SQLiteStore.open(.sqliteMemory)
        try await store.migrate()
        _ = try await store.signIn(StoreFixture.login(session: "first", now: now), now: now)
        return store  // closed by its deinit when the benchmark ends
    }
}

/// A signing key, its JWKS, a verifier pinned to it and one honest token.
struct IDTokenFixture: Sendable {
    let verifier: BenchmarkSupport.IDTokens
    let token: String

    static func make(now: Date) async throws -> IDTokenFixture {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try key.publicKey.getKeyPrimitives()
        let jwks: JSONValue = [
            "keys": [
                [
                    "kty": "RSA", "kid": "bench", "alg": "RS256", "use": "sig",
                    "n": .string(Base64URL.encode(primitives.modulus)),
                    "e": .string(Base64URL.encode(primitives.publicExponent)),
                ]
            ]
        ]
        let header: JSONValue = ["alg": "RS256", "kid": "bench", "typ": "JWT"]
        let issued = Int(now.timeIntervalSince1970)
        let claims: JSONValue = [
            "iss": "https://www.facebook.com", "aud": "100000000000001", "sub": "9700671485075241",
            "iat": .int(issued), "exp": .int(issued + 3600), "jti": "bench-jti",
            // The SHA-256 hex of "bench-nonce": the server's default mode wants the hash in the token.
            "nonce": "aaaa953f65119f8fdf5df785d2a838579e40da1ff369461c30b097dca332fd66",
            "name": "Alice Liddell", "email": "alice@example.com",
        ]
        let input = Base64URL.encode(header.encoded()) + "." + Base64URL.encode(claims.encoded())
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        let token = input + "." + Base64URL.encode(signature.rawRepresentation)
        return IDTokenFixture(
            verifier: try await BenchmarkSupport.IDTokens(jwks: jwks, appID: "100000000000001", now: now), token: token)
    }
}

/// A signer and one of its tokens.
struct SignedToken: Sendable {
    let signer: BenchmarkSupport.SessionSigner
    let token: String

    /// A fresh signer and one access token it signed.
    static func make(now: Date) throws -> SignedToken {
        let signer = try BenchmarkSupport.SessionSigner(now: now)
        return SignedToken(signer: signer, token: try signer.sign(userID: "user-1", sessionID: "session-1", now: now))
    }
}

/// The login record of one returning person.
enum StoreFixture {
    static func login(session: String, now: Date) -> LoginRecord {
        LoginRecord(
            identity: StoredIdentity(
                provider: "facebook", subject: "9700671485075241", appID: "100000000000001",
                grantedPermissions: ["email", "public_profile"], firstSeen: now, lastSeen: now),
            mappedProperties: ["name": "Alice Liddell", "email": "alice@example.com"], refreshProperties: true,
            newUserID: "user-1",
            session: NewSession(
                id: session, refreshTokenHash: Data(session.utf8), createdAt: now,
                refreshExpiresAt: now.addingTimeInterval(86_400)))
    }
}
