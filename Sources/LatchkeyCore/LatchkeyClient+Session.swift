import Foundation
import LatchkeyAPI

/// Restoring, refreshing and using the session.
extension LatchkeyClient {
    /// Loads the stored session (`createdTokenLoaded`) and makes sure it is usable (`open`),
    /// refreshing it if it is stale. Call it at launch, and again when the network comes back:
    /// offline, the state stays `createdTokenLoaded` with `currentUser` set, and the next call
    /// (or any successful refresh) opens the session.
    /// - Returns: whether the session is open afterwards.
    @discardableResult
    public func restoreSession() async -> Bool {
        switch state {
        case .open, .openTokenExtended: return true
        case .opening: return false  // a sign-in is under way; it decides
        case .created, .createdTokenLoaded, .closed, .closedLoginFailed: break
        }
        if credentials == nil {
            let startEpoch = epoch
            let startAttempt = attempt
            // Read after this client's own queued writes (a sign-out's clear must not be read around),
            // and again if another write was queued while reading.
            var loaded: StoredCredentials?
            var writesBefore: UInt64
            repeat {
                await storeWritesSettled()
                writesBefore = writesQueued
                do {
                    loaded = try await configuration.credentialStore.load()
                } catch {
                    log(.warning, "The credential store could not be read: \(error)", code: .credentialStoreFailed)
                    return false
                }
            } while writesQueued != writesBefore
            // The actor ran other calls during the load: only a client still without a session adopts it.
            guard credentials == nil, state != .opening, !state.isOpen else { return state.isOpen }
            // A sign-out or sign-in happened during the read: what was read is not to be restored.
            guard epoch == startEpoch, attempt == startAttempt else { return false }
            guard let loaded, loaded.serverURL == configuration.serverURL else { return false }
            epoch &+= 1
            credentials = loaded
            startOver(to: .createdTokenLoaded)
            hadSession = true
            log(.debug, "A stored session was loaded.")
        }
        do {
            _ = try await validAccessToken()
        } catch {
            // A session that ended was closed by `refresh()`; a transient failure keeps it loaded.
            return false
        }
        if state == .createdTokenLoaded { move(to: .open) }
        return state.isOpen
    }

    /// An access token valid for at least `refreshLeeway`, refreshing if needed; concurrent callers
    /// share one refresh (a refresh token is single use, so two refreshes would end the session).
    public func validAccessToken() async throws(LatchkeyError) -> String {
        guard let current = credentials else { throw LatchkeyError.notSignedIn }
        if current.accessTokenExpiresAt.timeIntervalSince(configuration.clock()) > configuration.refreshLeeway {
            return current.accessToken
        }
        return try await refresh().accessToken
    }

    /// Forces a refresh now (one at a time; concurrent callers share it).
    /// - Throws: `not_signed_in` when there is no session; `cancelled` when it ended while the
    ///   refresh was in flight; the server's codes (a `reopenSession` one ends the session);
    ///   `network_unavailable`.
    @discardableResult
    public func refresh() async throws(LatchkeyError) -> StoredCredentials {
        let epoch = self.epoch
        let task: Task<StoredCredentials, any Error>
        if let refreshTask {
            task = refreshTask
        } else {
            guard let current = credentials else { throw LatchkeyError.notSignedIn }
            task = Task { try await self.refreshCoordinated(from: current, epoch: epoch) }
            refreshTask = task
        }
        defer { if refreshTask == task { refreshTask = nil } }
        do throws(LatchkeyError) {
            let refreshed = try await Self.value(of: task)
            // The session may have ended while the refreshed tokens were being saved.
            guard epoch == self.epoch else { throw LatchkeyError.sessionEnded }
            return refreshed
        } catch {
            if error.category == .reopenSession && epoch == self.epoch {
                endLocally(clearingStore: true, reason: "The server ended the session.")
            }
            throw error
        }
    }

    // MARK: User

    /// Reloads the user from the server.
    public func reloadUser() async throws(LatchkeyError) -> LatchkeyUser {
        try await adoptUser(authorized("GET", "v1/users/me", json: nil))
    }

    /// Changes properties the server lets users write (`null` removes).
    public func updateUser(properties: [String: JSONValue]) async throws(LatchkeyError) -> LatchkeyUser {
        try await adoptUser(authorized("PATCH", "v1/users/me", json: UserPropertiesUpdate(properties: properties).json))
    }

    // MARK: Internals

    /// The refresh proper, holding the store's exclusive access from the re-read to the save, so that
    /// two clients over one store never spend the same refresh token.
    private func refreshCoordinated(from current: StoredCredentials, epoch: UInt64) async throws -> StoredCredentials {
        // This client's queued writes land first, so the re-read below sees them.
        await storeWritesSettled()
        do {
            return try await configuration.credentialStore.withExclusiveAccess {
                try await self.refreshExclusively(from: current, epoch: epoch)
            }
        } catch let error as LatchkeyError {
            throw error
        } catch {
            throw LatchkeyError.sdk(
                .credentialStoreFailed, "The credential store could not be locked for a refresh.", underlying: error)
        }
    }

    private func refreshExclusively(
        from current: StoredCredentials, epoch: UInt64
    ) async throws(LatchkeyError) -> StoredCredentials {
        let store = configuration.credentialStore
        var base = current
        // Another client over this store may have refreshed since this one loaded (spending the
        // token in hand), signed out, or signed in another session. An unreadable store proves
        // nothing: the token in hand is used, and the server decides.
        let read: StoredCredentials??
        do { read = .some(try await store.load()) } catch { read = .none }
        if case .some(let found) = read {
            guard epoch == self.epoch else { throw LatchkeyError.sessionEnded }
            if lastStoreWriteFailed {
                // The store does not hold what this client has (its last write failed): nothing
                // to learn from it; the refresh below saves again.
            } else if let stored = found {
                guard stored.isSameSession(as: current) else {
                    endLocally(clearingStore: false, reason: "Another client signed in another session.")
                    throw LatchkeyError.endedElsewhere
                }
                if stored.refreshToken != current.refreshToken, stored.refreshedAt > current.refreshedAt {
                    base = stored
                    base.user = current.user
                    if stored.accessTokenExpiresAt.timeIntervalSince(configuration.clock())
                        > configuration.refreshLeeway
                    {
                        credentials = base
                        move(to: refreshedState)
                        log(.debug, "Adopted the session another client refreshed.")
                        return base
                    }
                }
            } else {
                endLocally(clearingStore: false, reason: "Another client signed out.")
                throw LatchkeyError.endedElsewhere
            }
        }
        guard epoch == self.epoch else { throw LatchkeyError.sessionEnded }
        log(.debug, "Refreshing the session.")
        let session: SessionBody
        do {
            session = try await transport.send(
                "POST", "v1/oauth/token",
                form: TokenRequest.refresh(refreshToken: base.refreshToken).form, as: SessionBody.self)
        } catch {
            guard epoch == self.epoch else { throw LatchkeyError.sessionEnded }
            log(.warning, "The refresh failed.", code: error.code)
            throw error
        }
        // Signed out meanwhile: nothing to keep, but the sign-out may need the token to revoke with.
        guard epoch == self.epoch else {
            rotatedAfterEnd = (current.refreshToken, session.accessToken)
            throw LatchkeyError.sessionEnded
        }
        let refreshed = credentials(from: session, user: base.user)
        credentials = refreshed
        move(to: refreshedState)
        // Saved here, under the exclusive access this refresh holds; writes queued meanwhile wait for it.
        do {
            try await store.save(refreshed)
            storeWriteFinished(failure: nil)
        } catch {
            storeWriteFinished(failure: error)
        }
        // Signed out while saving: with a store that has no exclusive access, the sign-out's clear
        // may have run first; clear again behind it.
        if epoch != self.epoch { persist(.clear(refreshed)) }
        return refreshed
    }

    /// A refresh opens a session loaded at launch, and extends an open one.
    private var refreshedState: AuthState { state == .createdTokenLoaded ? .open : .openTokenExtended }

    /// Calls an authenticated endpoint, refreshing once on a 401 (the token may have expired in flight).
    /// A `reopenSession` answer, first or after the retry, ends the session here.
    private func authorized(
        _ method: String, _ path: String, json: JSONValue?
    ) async throws(LatchkeyError) -> (UserBody, UInt64) {
        let epoch = self.epoch
        do {
            let token = try await validAccessToken()
            do {
                return (try await transport.send(method, path, json: json, bearer: token, as: UserBody.self), epoch)
            } catch  where error.httpStatus == 401 && error.code == .unauthorized {
                let fresh = try await refresh().accessToken
                return (try await transport.send(method, path, json: json, bearer: fresh, as: UserBody.self), epoch)
            }
        } catch {
            if error.category == .reopenSession && error.code != .notSignedIn && epoch == self.epoch {
                endLocally(clearingStore: true, reason: "The server ended the session.")
            }
            throw error
        }
    }

    /// Keeps a user the server returned, if it still belongs to the current session; the store gets
    /// it only while it holds that session (onto its newest tokens).
    private func adoptUser(_ answer: (UserBody, UInt64)) async throws(LatchkeyError) -> LatchkeyUser {
        let user = LatchkeyUser(answer.0)
        guard answer.1 == epoch, var current = credentials, current.user.id == user.id else {
            throw LatchkeyError.sessionEnded
        }
        current.user = user
        credentials = current
        publishSnapshot()
        _ = await persist(.update(current)).value
        return user
    }

    static func value(of task: Task<StoredCredentials, any Error>) async throws(LatchkeyError) -> StoredCredentials {
        do {
            return try await task.value
        } catch {
            throw LatchkeyError.wrapping(error, as: .invalidResponse, "The refresh failed.")
        }
    }
}
