import Foundation
import LatchkeyAPI
import Testing

@testable import LatchkeyServer

/// `SessionKeyRefresher` and the activation rule: how a key added while servers run reaches them.
/// The clock is the test's; `refreshOnce()` is what the service runs every interval.
@Suite("Key refresh across running servers")
struct KeyRefreshTests {
    @Test(
        "a rotated key is published at the next refresh, signs only after the activation delay, and the old key retires once its tokens expired"
    )
    func refreshAndActivate() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let configuration = stack.configuration
            let protection = SigningKeyProtection(configuration)
            let delay = configuration.sessions.keyActivationDelay
            let (ring, _) = try await SessionKeyRing.load(
                from: stack.store, protection: protection, now: stack.clock.now,
                accessTokenLifetime: configuration.sessions.accessTokenLifetime, activationDelay: delay)
            let keys = SessionKeys(ring)
            let refresher = SessionKeyRefresher(
                store: stack.store, protection: protection, keys: keys, configuration: configuration,
                logger: stack.logs.logger(label: "latchkey"))
            let first = ring.signing.kid

            stack.clock.advance(1)
            let second = try await rotateSigningKey(in: stack.store, protection: protection, now: stack.clock.now)
            #expect(keys.current.verifying[second] == nil)
            #expect(await refresher.refreshOnce())
            #expect(keys.current.signing.kid == first)
            #expect(keys.current.verifying[second] != nil)
            #expect(try Self.published(keys) == [first, second])

            stack.clock.advance(delay - 1)
            #expect(await refresher.refreshOnce())
            #expect(keys.current.signing.kid == first)
            stack.clock.advance(1)
            #expect(await refresher.refreshOnce())
            #expect(keys.current.signing.kid == second)
            // The key just before the signing one always verifies: a server whose refresh failed
            // may still be signing with it.
            stack.clock.advance(configuration.sessions.accessTokenLifetime + 1)
            #expect(await refresher.refreshOnce())
            #expect(try Self.published(keys) == [first, second])

            let third = try await rotateSigningKey(in: stack.store, protection: protection, now: stack.clock.now)
            stack.clock.advance(delay)
            #expect(await refresher.refreshOnce())
            #expect(keys.current.signing.kid == third)
            #expect(try Self.published(keys) == [second, third])
            #expect(stack.logs.all.contains { $0.contains("latchkey.keys.changed") })
        }
    }

    @Test("an activation delay shorter than the JWKS cache plus a refresh is allowed, with a warning")
    func shortActivationDelayWarns() async throws {
        let warning = "latchkey.keys.activation_before_jwks_cache"
        try await Stack.run { (stack: Stack) async throws in
            #expect(!stack.logs.all.contains { $0.contains(warning) })
            let jwks = try await stack.get("/.well-known/jwks.json")
            #expect(jwks.headers[.cacheControl] == "public, max-age=300")
        }
        try await Stack.run({ $0.sessions.keyActivationDelay = 300 }) { (stack: Stack) async throws in
            #expect(stack.logs.all.contains { $0.contains(warning) && $0.contains("LATCHKEY_KEY_ACTIVATION_DELAY") })
        }
    }

    @Test("a refresh that cannot open the keys keeps the ring in use and says why")
    func failedRefreshKeepsRing() async throws {
        try await Stack.run { (stack: Stack) async throws in
            let configuration = stack.configuration
            let protection = SigningKeyProtection(configuration)
            let (ring, _) = try await SessionKeyRing.load(
                from: stack.store, protection: protection, now: stack.clock.now,
                accessTokenLifetime: configuration.sessions.accessTokenLifetime)
            let keys = SessionKeys(ring)
            var wrong = configuration
            wrong.secrets.keyEncryptionKey = KeyEncryptionKey.generate().key
            let refresher = SessionKeyRefresher(
                store: stack.store, protection: SigningKeyProtection(wrong), keys: keys, configuration: wrong,
                logger: stack.logs.logger(label: "latchkey"))
            #expect(await refresher.refreshOnce() == false)
            #expect(keys.current.signing.kid == ring.signing.kid)
            #expect(stack.logs.all.contains { $0.contains("latchkey.keys.refresh_failed") })
        }
    }

    @Test(
        "roles with an activation delay: a young key is pending, the one before it signs; with none old enough, the oldest"
    )
    func pendingRoles() {
        let now = Date(timeIntervalSince1970: 100_000)
        let keys: [(kid: String, createdAt: Date, retiredAt: Date?)] = [
            ("a", now.addingTimeInterval(-5000), now.addingTimeInterval(-100)),
            ("b", now.addingTimeInterval(-100), nil),
        ]
        #expect(
            SigningKeyRole.roles(keys, now: now, accessTokenLifetime: 900, activationDelay: 600)
                == ["a": .signing, "b": .pending])
        #expect(
            SigningKeyRole.roles(keys, now: now, accessTokenLifetime: 900, activationDelay: 0)
                == ["a": .verifying, "b": .signing])
        let young: [(kid: String, createdAt: Date, retiredAt: Date?)] = [
            ("y", now.addingTimeInterval(-5), nil), ("x", now.addingTimeInterval(-10), now.addingTimeInterval(-5)),
        ]
        #expect(
            SigningKeyRole.roles(young, now: now, accessTokenLifetime: 900, activationDelay: 600)
                == ["x": .signing, "y": .pending])
    }

    @Test(
        "a refresh retried after the signing key changed still names the successor the old key made; other tokens' do not match"
    )
    func successorsAcrossKeyChange() throws {
        let now = Date(timeIntervalSince1970: 100_000)
        let old = SessionSigningKey.generate(now: now.addingTimeInterval(-5000))
        let new = SessionSigningKey.generate(now: now.addingTimeInterval(-1000))
        let before = try SessionKeyRing(keys: [old], now: now, accessTokenLifetime: 900)
        let after = try SessionKeyRing(keys: [new, old], now: now, accessTokenLifetime: 900, activationDelay: 600)
        #expect(after.signing.kid == new.kid)
        let rotatedWith = before.refreshSuccessors(of: "token")[0]
        let candidates = after.refreshSuccessors(of: "token")
        #expect(candidates.count == 2 && candidates[0].token != rotatedWith.token)
        #expect(candidates.contains { $0.token == rotatedWith.token && $0.hash == rotatedWith.hash })
        #expect(!after.refreshSuccessors(of: "other").contains { $0.hash == rotatedWith.hash })
    }

    static func published(_ keys: SessionKeys) throws -> Set<String> {
        let jwks = try JSONValue.decode(keys.current.jwks)
        return Set(jwks["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue } ?? [])
    }
}
