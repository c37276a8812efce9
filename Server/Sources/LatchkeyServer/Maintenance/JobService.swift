import Foundation
import LatchkeyAPI
import Logging
import ServiceLifecycle

/// Runs the background jobs kept in the database (`LatchkeyStore.claimJobs`) every
/// `LATCHKEY_JOB_INTERVAL`: a job claimed by one node is leased to it, so with many nodes each job
/// runs on one at a time, and a node that dies mid-job leaves a lease that expires and the job
/// runs again elsewhere. A job that fails is tried again later, each time later
/// (`retryDelay(afterAttempts:)`), until it succeeds or `maximumAttempts` is reached; both ends are
/// audit events. Tests call `runOnce()` after moving their clock.
package struct JobService: Service {
    /// Jobs claimed per store call.
    static let batchSize = 20
    /// How long a node holds a claimed job before another may take it, seconds: far above one
    /// job's Graph call (bounded by `LATCHKEY_FACEBOOK_TIMEOUT`).
    static let lease: TimeInterval = 300
    /// Attempts before a job gives up: with the doubling delays, about two days of trying.
    package static let maximumAttempts = 16

    let store: any LatchkeyStore
    let configuration: ServerConfiguration
    let revoker: FacebookPermissionRevoker
    let appleRevoker: AppleTokenRevoker
    let logger: Logger

    /// A runner over `store`, revoking at Facebook through `revoker` and at Apple through `appleRevoker`.
    package init(
        store: any LatchkeyStore, configuration: ServerConfiguration, revoker: FacebookPermissionRevoker,
        appleRevoker: AppleTokenRevoker, logger: Logger
    ) {
        self.store = store
        self.configuration = configuration
        self.revoker = revoker
        self.appleRevoker = appleRevoker
        self.logger = logger
    }

    /// Runs due jobs every interval until the service group shuts down.
    package func run() async {
        // Cancelled while waiting, never mid-job; a job claimed by a node killed outright has a
        // lease that expires, and another run takes it.
        await runPeriodically(every: .seconds(configuration.maintenance.jobInterval)) { await runOnce() }
    }

    /// The wait before the next attempt after `attempts` failed ones: 30 s doubling, at most 6 h.
    package static func retryDelay(afterAttempts attempts: Int) -> TimeInterval {
        min(30 * pow(2, Double(max(attempts - 1, 0))), 6 * 3600)
    }

    /// Claims the due jobs and runs them, until none is due. A store failure ends the run; the
    /// next interval tries again.
    /// - Returns: how many jobs ran (whatever their outcome).
    @discardableResult
    package func runOnce() async -> Int {
        // What the jobs record names this node, and no client.
        await AuditContext.$current.withValue(AuditContext(node: configuration.http.nodeName, client: .unknown)) {
            await runDue()
        }
    }

    /// `runOnce`'s loop.
    private func runDue() async -> Int {
        var ran = 0
        while !Task.isCancelled {
            let now = configuration.clock()
            let jobs: [StoredJob]
            do {
                jobs = try await store.claimJobs(
                    now: now, leaseUntil: now.addingTimeInterval(Self.lease), limit: Self.batchSize)
            } catch {
                logger.warning("latchkey.jobs.claim_failed", metadata: ["latchkey.error.cause": "\(error)"])
                break
            }
            if jobs.isEmpty { break }
            for job in jobs {
                await run(job)
                ran += 1
            }
        }
        return ran
    }

    private func run(_ job: StoredJob) async {
        let result: JobResult
        let done: AuditEvent.Kind
        let gaveUp: AuditEvent.Kind
        switch job.kind {
        case .facebookRevokePermissions:
            result = await revoker.revoke(job)
            (done, gaveUp) = (.facebookPermissionsRevoked, .facebookPermissionsRevocationFailed)
        case .appleRevokeToken:
            result = await appleRevoker.revoke(job)
            (done, gaveUp) = (.appleTokenRevoked, .appleTokenRevocationFailed)
        case .dataDeletion:
            // The store records the request's own events; the job's end needs none.
            await finish(job, result: await carryOutDeletion(job), gaveUp: .deletionFailed)
            return
        }
        await finish(job, result: result, done: done, gaveUp: gaveUp)
    }

    /// Carries out the deletion request a `dataDeletion` job names: one store transaction, which a
    /// repeated run (after a crash between it and the job's end) finds done and leaves alone.
    private func carryOutDeletion(_ job: StoredJob) async -> JobResult {
        guard let id = job.payload["request_id"]?.stringValue else { return .done(detail: [:]) }
        do {
            _ = try await store.carryOutDeletionRequest(id: id, now: configuration.clock())
            return .done(detail: [:])
        } catch {
            return .failed("store: \(error)")
        }
    }

    /// Ends a job as `result` says: done (recording a `done` event, if any), retried later, or
    /// given up after `maximumAttempts` (recording `gaveUp`, if any).
    private func finish(
        _ job: StoredJob, result: JobResult, done: AuditEvent.Kind? = nil, gaveUp: AuditEvent.Kind? = nil
    ) async {
        let outcome: JobOutcome
        switch result {
        case .done(let detail):
            outcome = .done(done.map { AuditEvent(type: $0, userID: job.userID, detail: detail) })
        case .failed(let reason) where job.attempts >= Self.maximumAttempts:
            var detail: [String: JSONValue] = ["attempts": .int(job.attempts), "reason": .string(reason)]
            // Which app or client it was for; never the token.
            for key in ["app_id", "client_id", "request_id"] { detail[key] = job.payload[key] }
            outcome = .gaveUp(gaveUp.map { AuditEvent(type: $0, userID: job.userID, detail: .object(detail)) })
        case .failed(let reason):
            outcome = .retry(
                at: configuration.clock().addingTimeInterval(Self.retryDelay(afterAttempts: job.attempts)),
                error: reason)
        }
        logger.info(
            "latchkey.jobs.ran",
            metadata: [
                "latchkey.job.kind": "\(job.kind.rawValue)", "latchkey.job.attempts": .stringConvertible(job.attempts),
                "latchkey.job.outcome": "\(outcome.name)",
            ])
        do {
            try await store.finishJob(id: job.id, outcome: outcome, now: configuration.clock())
        } catch {
            // The lease expires and the job runs again: jobs are idempotent.
            logger.warning("latchkey.jobs.finish_failed", metadata: ["latchkey.error.cause": "\(error)"])
        }
    }
}

/// What running a job found.
package enum JobResult: Sendable, Equatable {
    /// Done, or nothing left to do; `detail` goes into the audit event.
    case done(detail: JSONValue)
    /// Not done; a short reason for the job's row and the log (never a token).
    case failed(String)
}

extension JobOutcome {
    /// A word for the log.
    var name: String {
        switch self {
        case .done: "done"
        case .retry: "retry"
        case .gaveUp: "gave_up"
        }
    }
}
