import Foundation
import Logging
import ServiceLifecycle

/// Deletes what the database no longer needs (expired nonces, `jti`s, Easy Login requests and
/// codes, ended sessions with their refresh tokens, audit events past retention) every
/// `configuration.maintenance.pruneInterval`, in the application's service group.
///
/// Pruning once ran inside sign-ins and nonce issuing, scanning whole tables in the transactions
/// every request waits on, and never reached sessions or audit rows. Here it is background work in
/// short batches (`LatchkeyStore.prune`), and its dates come from `PruneCutoffs(now:configuration:)`
/// with the configuration's clock, so tests call `runOnce()` after moving a test clock.
package struct PruningService: Service {
    /// Rows each table gives up per store call: small enough that a call is one short transaction.
    package static let defaultBatchSize = 500
    /// Store calls per run at most, so a run under a flood of new rows still ends; what is left
    /// waits for the next interval.
    static let maximumBatchesPerRun = 1_000

    let store: any LatchkeyStore
    let configuration: ServerConfiguration
    let logger: Logger
    let batchSize: Int

    /// A pruner for `store`.
    /// - Parameters:
    ///   - store: the database to prune.
    ///   - configuration: the clock, the interval, the lifetimes and the audit retention.
    ///   - logger: counts at debug, failures at warning.
    ///   - batchSize: the `limit` of each store call.
    package init(
        store: any LatchkeyStore, configuration: ServerConfiguration, logger: Logger,
        batchSize: Int = PruningService.defaultBatchSize
    ) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.batchSize = max(batchSize, 1)
    }

    /// Prunes every interval until the service group shuts down (gracefully or by cancellation).
    ///
    /// Waits before the first run rather than after start-up: starting stays quick, and what
    /// accumulated while the server was down goes at the first interval, in batches like the rest.
    package func run() async {
        // A key-encryption key changes only with a restart: what it must seal again is sealed once,
        // at the start, in the background (signing keys are sealed again before the start instead).
        await resealProviderTokens()
        await resealFactorSecrets()
        // A prune call is a transaction: nothing is half-done when shutdown cancels the wait.
        await runPeriodically(every: .seconds(configuration.maintenance.pruneInterval)) { await runOnce() }
    }

    /// Seals again the provider tokens stored plain or under an earlier key-encryption key
    /// (`ProviderTokenSealing.resealAll`), logging what it did; a failure is logged, and the next
    /// start tries again.
    /// - Returns: how many were sealed again.
    @discardableResult
    package func resealProviderTokens() async -> Int {
        await reseal(.providerTokens) {
            try await ProviderTokenSealing(protection: SigningKeyProtection(configuration))
                .resealAll(in: store, batchSize: batchSize)
        }
    }

    /// Seals again the factor secrets stored plain or under an earlier key-encryption key
    /// (`FactorSecretSealing.resealAll`), as `resealProviderTokens` does for providers' tokens.
    /// - Returns: how many were sealed again.
    @discardableResult
    package func resealFactorSecrets() async -> Int {
        await reseal(.factorSecrets) {
            try await FactorSecretSealing(protection: SigningKeyProtection(configuration))
                .resealAll(in: store, batchSize: batchSize)
        }
    }

    /// What one reseal logs (notice, warning, warning), written out whole so that docs/operations.md's
    /// table of events is held to them (`LogEventTests`).
    struct ResealEvents {
        let sealed: Logger.Message
        let unopened: Logger.Message
        let failed: Logger.Message

        static let providerTokens = ResealEvents(
            sealed: "latchkey.provider_tokens.sealed", unopened: "latchkey.provider_tokens.unopened",
            failed: "latchkey.provider_tokens.reseal_failed")
        static let factorSecrets = ResealEvents(
            sealed: "latchkey.factor_secrets.sealed", unopened: "latchkey.factor_secrets.unopened",
            failed: "latchkey.factor_secrets.reseal_failed")
    }

    /// Runs one of the reseals, logging how many it sealed, how many it could not open (naming the
    /// setting that would open them), or its failure.
    private func reseal(
        _ events: ResealEvents, _ run: () async throws -> (resealed: Int, unopened: Int)
    ) async -> Int {
        do {
            let (resealed, unopened) = try await run()
            if resealed > 0 {
                logger.notice(events.sealed, metadata: ["latchkey.keys.count": .stringConvertible(resealed)])
            }
            if unopened > 0 {
                logger.warning(
                    events.unopened,
                    metadata: [
                        "latchkey.keys.count": .stringConvertible(unopened),
                        "latchkey.setting": "LATCHKEY_PREVIOUS_KEY_ENCRYPTION_KEYS",
                    ])
            }
            return resealed
        } catch {
            logger.warning(events.failed, metadata: ["latchkey.error.cause": "\(error)"])
            return 0
        }
    }

    /// Prunes once: computes the cutoffs now, then calls the store until no table reaches the
    /// batch size (or the run's cap, or cancellation). A failure is logged and ends this run only;
    /// the next interval tries again.
    /// - Returns: the rows deleted, added up over the calls.
    @discardableResult
    package func runOnce() async -> PruneReport {
        // What pruning records (an orphan token's revocation queued) names this node.
        await AuditContext.$current.withValue(AuditContext(node: configuration.http.nodeName, client: .unknown)) {
            await pruneNow()
        }
    }

    /// `runOnce`'s loop.
    private func pruneNow() async -> PruneReport {
        let cutoffs = PruneCutoffs(now: configuration.clock(), configuration: configuration)
        var total = PruneReport()
        for _ in 0..<Self.maximumBatchesPerRun {
            guard !Task.isCancelled else { break }
            do {
                let report = try await store.prune(cutoffs, limit: batchSize)
                total.add(report)
                if !report.reachedLimit(batchSize) { break }
            } catch {
                logger.warning("latchkey.prune.failed", metadata: ["latchkey.error.cause": "\(error)"])
                break
            }
        }
        logger.debug(
            "latchkey.prune.done",
            metadata: [
                "latchkey.prune.single_use": .stringConvertible(total.singleUse),
                "latchkey.prune.nonces": .stringConvertible(total.nonces),
                "latchkey.prune.pending_authorizations": .stringConvertible(total.pendingAuthorizations),
                "latchkey.prune.authorization_codes": .stringConvertible(total.authorizationCodes),
                "latchkey.prune.sessions": .stringConvertible(total.sessions),
                "latchkey.prune.refresh_tokens": .stringConvertible(total.refreshTokens),
                "latchkey.prune.audit_events": .stringConvertible(total.auditEvents),
                "latchkey.prune.guests": .stringConvertible(total.guests),
                "latchkey.prune.orphan_provider_tokens": .stringConvertible(total.orphanProviderTokens),
            ])
        return total
    }
}
