import Foundation
import HTTPTypes
import LatchkeyAPI
import LatchkeySQLite
import LatchkeyServer
import Logging
import Testing

/// The background pruner: its policy, its settings, and its effect on a running server.
@Suite("Pruning service")
struct PruningServiceTests {
    static let quiet: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()

    @Test("the policy: records at expiry, requests and codes an hour later, sessions an access token later")
    func policy() {
        var configuration = ServerConfiguration()
        configuration.sessions.accessTokenLifetime = 900
        configuration.maintenance.auditRetention = 86_400
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let cutoffs = PruneCutoffs(now: now, configuration: configuration)
        #expect(cutoffs.singleUseExpiredBefore == now && cutoffs.noncesExpiredBefore == now)
        #expect(cutoffs.pendingAuthorizationsExpiredBefore == now.addingTimeInterval(-3600))
        #expect(cutoffs.authorizationCodesExpiredBefore == now.addingTimeInterval(-3600))
        #expect(cutoffs.sessionsEndedBefore == now.addingTimeInterval(-900))
        #expect(cutoffs.auditEventsBefore == now.addingTimeInterval(-86_400))
    }

    @Test("LATCHKEY_AUDIT_RETENTION and LATCHKEY_PRUNE_INTERVAL: defaults, parsing, validation")
    func settings() throws {
        let defaults = ServerConfiguration()
        #expect(defaults.maintenance.auditRetention == 180 * 86_400 && defaults.maintenance.pruneInterval == 300)
        let required = [
            "LATCHKEY_FACEBOOK_APP_ID": "1", "LATCHKEY_FACEBOOK_APP_SECRET": "s",
            "LATCHKEY_ALLOW_PLAINTEXT_SIGNING_KEYS": "true",
        ]
        let parsed = try ServerConfiguration(
            settings: required.merging(["LATCHKEY_AUDIT_RETENTION": "3600", "LATCHKEY_PRUNE_INTERVAL": "60"]) { $1 })
        #expect(parsed.maintenance.auditRetention == 3600 && parsed.maintenance.pruneInterval == 60)
        try parsed.validate()
        #expect(ServerConfiguration.settingNames.contains("LATCHKEY_AUDIT_RETENTION"))
        #expect(ServerConfiguration.settingNames.contains("LATCHKEY_PRUNE_INTERVAL"))
        #expect(throws: ConfigurationError.self) {
            _ = try ServerConfiguration(settings: ["LATCHKEY_AUDIT_RETENTION": "forever"])
        }
        for (name, value) in [
            ("LATCHKEY_AUDIT_RETENTION", "0"), ("LATCHKEY_AUDIT_RETENTION", "-5"), ("LATCHKEY_PRUNE_INTERVAL", "0"),
            ("LATCHKEY_PRUNE_INTERVAL", "100000"),
        ] {
            let configuration = try ServerConfiguration(settings: required.merging([name: value]) { $1 })
            #expect {
                try configuration.validate()
            } throws: { "\($0)".contains(name) }
        }
    }

    @Test("runOnce calls the store until no table reaches the batch size")
    func loopsUntilDone() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        try await store.migrate()
        let now = StoreContractTests.now
        for index in 0..<7 {
            try await store.storeNonce("n\(index)", expiresAt: now.addingTimeInterval(-1), now: now)
        }
        var configuration = ServerConfiguration()
        configuration.clock = { now }
        let service = PruningService(store: store, configuration: configuration, logger: Self.quiet, batchSize: 2)
        #expect(await service.runOnce() == PruneReport(nonces: 7))
        #expect(await service.runOnce() == PruneReport())
        try await store.close()
    }

    @Test("a failing store is logged, not thrown: the run ends and the next one tries again")
    func failureDoesNotStop() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        try await store.close()
        let service = PruningService(store: store, configuration: ServerConfiguration(), logger: Self.quiet)
        #expect(await service.runOnce() == PruneReport())
        #expect(await service.runOnce() == PruneReport())
    }

    @Test("run waits for its interval and stops at once when cancelled")
    func cancellation() async throws {
        let store = try await SQLiteStore.open(.sqliteMemory)
        try await store.migrate()
        var configuration = ServerConfiguration()
        configuration.maintenance.pruneInterval = 86_400
        let service = PruningService(store: store, configuration: configuration, logger: Self.quiet)
        let running = Task { await service.run() }
        running.cancel()
        await running.value  // returns: the day-long wait was cut short
        try await store.close()
    }

    @Test("through the server: a signed-out session is pruned and still reads as ended")
    func signedOutSession() async throws {
        try await Stack.run { stack in
            let session = try await SessionTests.signedIn(stack)
            let access = try #require(session["access_token"]?.stringValue)
            let refresh = try #require(session["refresh_token"]?.stringValue)
            let rotated = try await SessionTests.refresh(stack, refresh)
            let next = try #require(try rotated.json()["refresh_token"]?.stringValue)
            let nextAccess = try #require(try rotated.json()["access_token"]?.stringValue)
            #expect(
                try await stack.post("/v1/auth/logout", json: [:], headers: [.authorization: "Bearer \(access)"])
                    .status == .noContent)

            var configuration = ServerConfiguration()
            configuration.clock = { stack.clock.now }
            let pruner = PruningService(store: stack.store, configuration: configuration, logger: Self.quiet)
            func answers() async throws -> [String?] {
                [
                    try await stack.get("/v1/users/me", bearer: nextAccess).errorCode,
                    try await SessionTests.refresh(stack, next).errorCode,
                    try await SessionTests.refresh(stack, refresh).errorCode,
                ]
            }
            let before = try await answers()
            #expect(before == ["session_revoked", "refresh_token_invalid", "refresh_token_invalid"])
            // Within an access token's lifetime of the sign-out the session stays; after, it goes.
            #expect(await pruner.runOnce().sessions == 0)
            stack.clock.advance(configuration.sessions.accessTokenLifetime + 1)
            let report = await pruner.runOnce()
            #expect(report.sessions == 1 && report.refreshTokens == 2)
            // The refresh tokens read as before; the access token has expired by now, as every access
            // token of a session has once the pruner may delete it (refused before any lookup).
            #expect(try await answers() == ["unauthorized", "refresh_token_invalid", "refresh_token_invalid"])
        }
    }

    @Test("a Facebook return later than the grace after expiry reads as unknown, pruned yet or not")
    func lateReturn() async throws {
        try await Stack.run(browsable: true) { stack in
            let first = try await TestBrowser.get(AuthorizeRequest().url(stack))
            let answered = try await TestBrowser.get(try #require(first.location) + "&emulator_user=bob")
            let callback = try #require(answered.location)
            stack.clock.advance(600 + PruneCutoffs.pendingAuthorizationGrace + 1)
            guard case .page(let status, let body) = try await TestBrowser.get(callback) else {
                Issue.record("a request expired beyond the grace must not redirect")
                return
            }
            #expect(status == 400 && body.contains("already completed"))
        }
    }
}
