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
        case .created, .storeUnreadable, .createdTokenLoaded, .closed, .closedLoginFailed: break
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
                    // Not "signed out": the store may hold a session it cannot show yet (the
                    // Keychain before the first unlock). Nothing is cleared; a later call retries.
                    log(.warning, "The credential store could not be read: \(error)", code: .credentialStoreFailed)
                    if credentials == nil, epoch == startEpoch, attempt == startAttempt, state == .created {
                        move(to: .storeUnreadable)
                    }
                    return false
                }
            } while writesQueued != writesBefore
            // The actor ran other calls during the load: only a client still without a session adopts it.
            guard credentials == nil, state != .opening, !state.isOpen else { return state.isOpen }
            // A sign-out or sign-in happened during the read: what was read is not to be restored.
            guard epoch == startEpoch, attempt == startAttempt else { return false }
            guard let loaded, loaded.serverURL == configuration.serverURL else {
                // Read at last, and nobody is signed in.
                if state == .storeUnreadable { startOver(to: .created) }
                return false
            }
            adoptStoredSession(loaded, "A stored session was loaded.")
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
    /// two clients over one store never spend the same refresh token, and running as background
    /// work (``LatchkeyConfiguration/backgroundWork``) until the answer is saved: an app suspended
    /// between the server's rotation and the save would wake holding only the spent token.
    private func refreshCoordinated(from current: StoredCredentials, epoch: UInt64) async throws -> StoredCredentials {
        // This client's queued writes land first, so the re-read below sees them.
        await storeWritesSettled()
        do {
            let store = configuration.credentialStore
            let refresh: @Sendable () async throws -> StoredCredentials = {
                try await store.withExclusiveAccess { try await self.refreshExclusively(from: current, epoch: epoch) }
            }
            guard let background = configuration.backgroundWork else { return try await refresh() }
            return try await background.run(named: "Latchkey session refresh", refresh)
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
        var base = current
        // Another client over this store may have refreshed since this one loaded (spending the
        // token in hand), signed out, or signed in another session. After this client's own write
        // failed, the store does not hold what it has: nothing to learn from it (the refresh below
        // saves again).
        if !lastStoreWriteFailed, let newer = try await catchUp(with: base, epoch: epoch) {
            if takeNewerTokens(newer) { return newer }
            base = newer
        }
        var superseded = false
        let session: SessionBody
        while true {
            guard epoch == self.epoch else { throw LatchkeyError.sessionEnded }
            log(.debug, "Refreshing the session.")
            do {
                session = try await transport.send(
                    "POST", "v1/oauth/token", form: TokenRequest.refresh(refreshToken: base.refreshToken).form,
                    as: SessionBody.self)
                break
            } catch  where error.code == .refreshTokenSuperseded && !superseded {
                // Another client over this store refreshed moments ago and used the new token
                // already (an extension and its app): its tokens are in the store. Take them and,
                // if they need it, refresh them once; never a sign-out.
                superseded = true
                guard let newer = try await catchUp(with: base, epoch: epoch) else {
                    log(.warning, "The refresh was superseded and the store holds nothing newer.", code: error.code)
                    throw error
                }
                if takeNewerTokens(newer) { return newer }
                base = newer
            } catch {
                guard epoch == self.epoch else { throw LatchkeyError.sessionEnded }
                log(.warning, "The refresh failed.", code: error.code)
                throw error
            }
        }
        // Signed out meanwhile: nothing to keep, but the sign-out may need the token to revoke with.
        guard epoch == self.epoch else {
            rotatedAfterEnd = (base.refreshToken, session.accessToken)
            throw LatchkeyError.sessionEnded
        }
        let refreshed = credentials(from: session, user: base.user)
        credentials = refreshed
        move(to: refreshedState)
        // Saved here, under the exclusive access this refresh holds; writes queued meanwhile wait for
        // it. A save that keeps failing is published, and tried again by the next refresh or sync;
        // meanwhile the server gives the spent token this same successor (its fail-to-save rule).
        await save(refreshed, to: configuration.credentialStore)
        // Signed out while saving: with a store that has no exclusive access, the sign-out's clear
        // may have run first; clear again behind it.
        if epoch != self.epoch { persist(.clear(refreshed)) }
        return refreshed
    }

    /// Reads the store and follows what another client did to the session `base` (``reconcile(_:with:)``):
    /// newer tokens of it, if any. An unreadable store proves nothing: `nil`, and the tokens in
    /// hand are used.
    private func catchUp(
        with base: StoredCredentials, epoch: UInt64
    ) async throws(LatchkeyError) -> StoredCredentials? {
        // A session that ended meanwhile ends this work as `cancelled`, whatever the store says.
        guard epoch == self.epoch else { throw LatchkeyError.sessionEnded }
        let found: StoredCredentials?
        do { found = try await configuration.credentialStore.load() } catch { return nil }
        guard epoch == self.epoch else { throw LatchkeyError.sessionEnded }
        return try reconcile(found, with: base)
    }

    /// Newer tokens of the session `current` that another client over the store saved, if any.
    /// When the store holds no session, another client signed out: the session ends here too.
    /// When it holds another session of this server, another client (an extension) signed someone
    /// in: this client adopts it rather than signing the app out, and the work in flight, which
    /// belonged to the replaced session, ends with `cancelled`.
    func reconcile(
        _ found: StoredCredentials?, with current: StoredCredentials
    ) throws(LatchkeyError)
        -> StoredCredentials?
    {
        guard let stored = found else {
            endLocally(clearingStore: false, reason: "Another client signed out.")
            throw LatchkeyError.endedElsewhere
        }
        guard stored.isSameSession(as: current) else {
            guard stored.serverURL == configuration.serverURL else {
                endLocally(clearingStore: false, reason: "Another client signed in to another server.")
                throw LatchkeyError.endedElsewhere
            }
            adoptStoredSession(stored, "Adopted the session another client signed in.")
            throw LatchkeyError.sessionEnded
        }
        guard stored.refreshToken != current.refreshToken, stored.refreshedAt > current.refreshedAt else { return nil }
        var newer = stored
        newer.user = current.user
        return newer
    }

    /// Holds `newer` tokens of this session, which another client saved. Returns whether their
    /// access token is still fresh: then they count as this client's refresh.
    private func takeNewerTokens(_ newer: StoredCredentials) -> Bool {
        credentials = newer
        log(.debug, "Adopted the session another client refreshed.")
        guard isFresh(newer) else {
            publishSnapshot()
            return false
        }
        move(to: refreshedState)
        return true
    }

    private func isFresh(_ credentials: StoredCredentials) -> Bool {
        credentials.accessTokenExpiresAt.timeIntervalSince(configuration.clock()) > configuration.refreshLeeway
    }

    /// Makes a stored session this client's (at launch, or one another client signed in): a new
    /// lifecycle, loaded (`createdTokenLoaded`) and opened at once when its access token is fresh.
    func adoptStoredSession(_ stored: StoredCredentials, _ reason: String) {
        epoch &+= 1
        refreshTask = nil
        // The store holds what this client now has: a failed save of a replaced session must not
        // make the next refresh skip reading it, nor a sync write the old copy back.
        forgetStoreWriteFailure()
        credentials = stored
        hadSession = true
        startOver(to: .createdTokenLoaded)
        if isFresh(stored) { move(to: .open) }
        log(.info, reason)
    }

    /// Follows what other clients over the credential store did since this one last looked, and
    /// saves again what this client failed to save. Call it when the app comes to the foreground
    /// (``LatchkeySessionModel`` does): an extension may have refreshed the session, signed out,
    /// or signed someone else in, which this client then adopts instead of signing the person out.
    /// Newer tokens another client saved count as this client's refresh when they are fresh (the
    /// state becomes `open` or `openTokenExtended`, as after a refresh). A store that cannot be
    /// read changes nothing.
    public func syncWithStore() async {
        guard credentials != nil else {
            // No session here: perhaps the store became readable, or another client signed in.
            if state != .opening { await restoreSession() }
            return
        }
        let epoch = self.epoch
        await storeWritesSettled()
        do {
            try await configuration.credentialStore.withExclusiveAccess {
                try await self.syncExclusively(epoch: epoch)
            }
        } catch {
            // Unreadable, locked, or the session changed meanwhile: the next refresh decides.
        }
    }

    private func syncExclusively(epoch: UInt64) async throws {
        guard epoch == self.epoch, let held = credentials else { return }
        let found = try await configuration.credentialStore.load()
        guard epoch == self.epoch else { return }
        if lastStoreWriteFailed, found.map({ $0.isSameSession(as: held) }) ?? true {
            // This client's last save failed: the store holds an older copy of this session, or
            // nothing (the failed save was the sign-in's own; an empty store is not read as another
            // client's sign-out then). Save again; the server still answers the spent token with
            // its successor.
            await save(held, to: configuration.credentialStore)
            return
        }
        if let newer = try reconcile(found, with: held) { _ = takeNewerTokens(newer) }
    }

    /// A refresh opens a session loaded at launch, and extends an open one.
    private var refreshedState: AuthState { state == .createdTokenLoaded ? .open : .openTokenExtended }

    /// Calls an authenticated endpoint, refreshing once on a 401 (the token may have expired in flight).
    /// A `reopenSession` answer, first or after the retry, ends the session here.
    func authorized(
        _ method: String, _ path: String, json: JSONValue?
    ) async throws(LatchkeyError) -> (UserBody, UInt64) {
        try await authorized(method, path, json: json, as: UserBody.self)
    }

    /// `authorized(_:_:json:)` for any answer's shape (`Data` for an answer without a body).
    func authorized<Answer: Decodable & Sendable>(
        _ method: String, _ path: String, json: JSONValue?, as type: Answer.Type
    ) async throws(LatchkeyError) -> (Answer, UInt64) {
        let epoch = self.epoch
        do {
            let token = try await validAccessToken()
            do {
                return (try await send(method, path, json: json, bearer: token, as: type), epoch)
            } catch  where error.httpStatus == 401 && error.code == .unauthorized {
                let fresh = try await refresh().accessToken
                // The refresh may have adopted another client's session: this request was not its.
                try stillCurrent(epoch)
                return (try await send(method, path, json: json, bearer: fresh, as: type), epoch)
            }
        } catch {
            // Only an answer about this session ends it here: a link's refused credential (an expired
            // Facebook token, an Apple nonce that does not match) says nothing of the session.
            if error.endsSession && epoch == self.epoch {
                endLocally(clearingStore: true, reason: "The server ended the session.")
            }
            // A call that needs a session that proved a second factor: the error can raise this one.
            throw error.resolving(with: self, purpose: .stepUp, now: configuration.clock())
        }
    }

    /// One request, decoding its answer as `type`; `Data` takes the body as it is (a 204 has none).
    private func send<Answer: Decodable & Sendable>(
        _ method: String, _ path: String, json: JSONValue?, bearer: String, as type: Answer.Type
    ) async throws(LatchkeyError) -> Answer {
        if type == Data.self, let raw = try await transport.sendRaw(method, path, json: json, bearer: bearer) as? Answer
        {
            return raw
        }
        return try await transport.send(method, path, json: json, bearer: bearer, as: type)
    }

    /// Throws `cancelled` when the session of `epoch` has ended or been replaced.
    private func stillCurrent(_ epoch: UInt64) throws(LatchkeyError) {
        guard epoch == self.epoch else { throw LatchkeyError.sessionEnded }
    }

    /// Keeps a user the server returned, if it still belongs to the current session; the store gets
    /// it only while it holds that session (onto its newest tokens).
    func adoptUser(_ answer: (UserBody, UInt64)) async throws(LatchkeyError) -> LatchkeyUser {
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
