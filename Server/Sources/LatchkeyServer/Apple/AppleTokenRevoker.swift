import AsyncHTTPClient
import Foundation
import LatchkeyAPI
import LatchkeyShared
import Logging

/// Revokes a stored Apple refresh token (`StoredJob.Kind.appleRevokeToken`) at Apple's
/// `/auth/revoke`, under the client id it was issued to, as Apple requires when an account is
/// deleted (TN3194): the person's Apple ID settings then no longer list the app, and a later
/// sign-up shows Apple's sheet (and shares the name) again. Idempotent: Apple answers 200 for a
/// token already revoked.
package struct AppleTokenRevoker: Sendable {
    let apple: AppleClient?
    let sealing: ProviderTokenSealing
    /// Where a newer token of the same person and client would be.
    let store: any LatchkeyStore

    /// A revoker calling the configured Apple through `client`, as the server's own does; for
    /// running jobs outside a running server (tests, tools).
    package init(configuration: ServerConfiguration, store: any LatchkeyStore, client: HTTPClient, logger: Logger) {
        self.init(
            apple: AppleClient(
                configuration: configuration, client: client, health: AppleHealth(enabled: true), logger: logger),
            sealing: ProviderTokenSealing(protection: SigningKeyProtection(configuration)), store: store)
    }

    init(apple: AppleClient?, sealing: ProviderTokenSealing, store: any LatchkeyStore) {
        self.apple = apple
        self.sealing = sealing
        self.store = store
    }

    /// Runs one revocation job.
    func revoke(_ job: StoredJob) async -> JobResult {
        guard let clientID = job.payload["client_id"]?.stringValue, let subject = job.payload["subject"]?.stringValue,
            let sealed = job.payload["token"]?.stringValue.flatMap(Base64URL.decode)
        else { return .failed("malformed job") }
        // Apple was switched off since: retried until it is back or the job gives up.
        guard let apple else { return .failed("Sign in with Apple is not configured") }
        // The person came back since (a new sign-in saved a new token for this client): Apple may end
        // the whole authorization on any revocation, so a late one would sign them out of the new
        // account. Their new token is revoked when that account or identity goes.
        if let queued = job.payload["queued_at"]?.intValue {
            do {
                if let saved = try await store.providerTokenSavedAt(
                    provider: "apple", subject: subject, clientID: clientID),
                    saved.timeIntervalSince1970 >= TimeInterval(queued)
                {
                    return .done(detail: ["client_id": .string(clientID), "outcome": "superseded"])
                }
            } catch {
                return .failed("database unavailable")
            }
        }
        guard let token = sealing.open(sealed, provider: "apple", subject: subject, clientID: clientID) else {
            return .failed("the token cannot be opened (key-encryption key missing?)")
        }
        switch await apple.revoke(refreshToken: token, clientID: clientID) {
        case .success: return .done(detail: ["client_id": .string(clientID), "outcome": "revoked"])
        // Apple no longer knows the token: nothing is left to revoke.
        case .failure(.invalidGrant):
            return .done(detail: ["client_id": .string(clientID), "outcome": "nothing_to_revoke"])
        case .failure(.invalidClient): return .failed("apple refused the client secret")
        case .failure(.other(let error)): return .failed("apple error \(error)")
        case .failure(.unreachable): return .failed("apple unreachable")
        }
    }
}
