import Foundation
import Logging
import ServiceLifecycle

/// Reads the session signing keys from the database every `keyRefreshInterval` and puts the ring
/// they make now in place, in the application's service group.
///
/// This is how a key added by `latchkey keys rotate` reaches every running server without a
/// restart: each publishes it in its JWKS at its next refresh, and signs with it only once it is
/// `keyActivationDelay` old (`SigningKeyRole.roles`), by which time every server has read it. The
/// roles also move with time alone (a pending key starts signing, a retired one leaves the JWKS),
/// so the ring is rebuilt at every refresh even when the rows did not change.
///
/// A refresh that fails (the database down, a key that no longer opens, a plain key while a
/// key-encryption key is set) keeps the ring in use and is logged; the next interval tries again.
/// A refused key is also kept in `SessionKeys.refusal` for `/ready` until a refresh succeeds. Nothing is written here: sealing keys again is the
/// start's and `keys rewrap`'s work.
struct SessionKeyRefresher: Service {
    let store: any LatchkeyStore
    let protection: SigningKeyProtection
    let keys: SessionKeys
    let configuration: ServerConfiguration
    let logger: Logger

    /// Refreshes every interval until the service group shuts down.
    func run() async {
        let interval = Duration.milliseconds(Int64(configuration.sessions.keyRefreshInterval * 1000))
        await runPeriodically(every: interval) { await refreshOnce() }
    }

    /// Reads the keys once and replaces the ring.
    /// - Returns: whether the ring was replaced.
    @discardableResult
    func refreshOnce() async -> Bool {
        let rows: [StoredSigningKey]
        do {
            rows = try await store.signingKeys()
        } catch {
            // The database, not the keys: `/ready` reports it on its own.
            logger.warning("latchkey.keys.refresh_failed", metadata: ["latchkey.error.cause": "\(error)"])
            return false
        }
        let ring: SessionKeyRing
        do {
            ring = try SessionKeyRing(
                keys: try openSigningKeys(rows, protection: protection), now: configuration.clock(),
                accessTokenLifetime: configuration.sessions.accessTokenLifetime,
                activationDelay: configuration.sessions.keyActivationDelay,
                sealedRequestWindow: configuration.sealedRequestWindow)
        } catch {
            // Whatever the keys read did (one does not open, a plain one, a malformed row): the
            // public `/ready` says only that they were refused; the log, which names the key id
            // and the key-encryption key's fingerprint (neither secret), says why.
            keys.refused(SessionKeys.refusalSummary)
            logger.error(
                "latchkey.keys.refresh_failed",
                metadata: [
                    "latchkey.error.cause": "\(error)",
                    "latchkey.error.hint":
                        "this server keeps its keys but would not start again: check that every server has the same LATCHKEY_KEY_ENCRYPTION_KEY (docs/deployment.md: changing it on running servers), then run `latchkey keys list` with this server's settings",
                ])
            return false
        }
        let before = keys.current
        keys.replace(with: ring)
        if before.signing.kid != ring.signing.kid || Set(before.verifying.keys) != Set(ring.verifying.keys) {
            logger.notice(
                "latchkey.keys.changed",
                metadata: [
                    "latchkey.keys.signing": "\(ring.signing.kid)",
                    "latchkey.keys.published": "\(ring.verifying.keys.sorted().joined(separator: ","))",
                ])
        }
        return true
    }
}
