import Foundation
import Hummingbird
import LatchkeyAPI
import Logging

/// Checks `Authorization: Bearer lka_…` (an admin key, `latchkey admin keys create`) before an
/// admin route runs, and records the call in the audit log once it is answered, naming the key.
///
/// The key is read from the store on every call, so a revocation takes effect at once on every
/// node. Failed attempts count against the client's address (`LATCHKEY_LIMIT_ADMIN_PER_ADDRESS`);
/// a good key gives its count back, so an operator's script is never limited.
struct AdminAuthentication: RouterMiddleware {
    typealias Context = LatchkeyRequestContext
    let store: any LatchkeyStore
    let limits: AbuseLimits
    let clock: @Sendable () -> Date
    let logger: Logger
    /// Whether each call is an `admin.call` audit event: not for `/metrics`, which a scraper calls
    /// every few seconds and which changes and reveals no person's data.
    var audited = true

    /// The same check, recording no audit event.
    var unaudited: AdminAuthentication {
        var copy = self
        copy.audited = false
        return copy
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let key = try await authenticate(request, context)
        var context = context
        context.adminKey = key
        guard audited else { return try await next(request, context) }
        return try await self.audited(request, context, key: key, next: next)
    }

    /// Runs `next` as `key`'s call: every change it makes names the key (`AuditContext.adminKeyID`),
    /// and the call itself is an `admin.call` event once answered, on the user its path names.
    /// The admin API and the console alike.
    func audited(
        _ request: Request, _ context: Context, key: StoredAdminKey,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var audit = AuditContext.current
        audit.adminKeyID = key.id
        let route = context.endpointPath ?? request.uri.path
        // Decoded as the handler decodes it: `%75%31` is the user `u1`, on whose history the call goes.
        let userID =
            route.hasPrefix("/admin/v1/users/{id}") || route.hasPrefix("/admin/users/{id}")
            ? AdminController.decoded("id", context) ?? "" : ""
        return try await AuditContext.$current.withValue(audit) {
            do {
                let response = try await next(request, context)
                await record(request, route: route, userID: userID, key: key, status: response.status.code)
                return response
            } catch {
                await record(
                    request, route: route, userID: userID, key: key,
                    status: (error as? APIError)?.status.code ?? (error as? any HTTPResponseError)?.status.code ?? 500)
                throw error
            }
        }
    }

    /// The stored key the request presents.
    ///
    /// Only failures count against the address: a good key always passes, so a stranger sharing
    /// an operator's address (a NAT, a proxy) cannot lock the operator out by guessing.
    /// - Throws: `401 admin_key_invalid` for none, a malformed, unknown or revoked one, or a wrong
    ///   secret (one answer for all, so a caller learns nothing of which keys exist); `429` once
    ///   an address has guessed too often.
    func authenticate(_ request: Request, _ context: Context) async throws -> StoredAdminKey {
        if let header = request.headers[.authorization], let token = BearerAuthentication.bearerToken(header),
            let stored = try await key(token)
        {
            return stored
        }
        try await refuse(request, context)
        throw APIError.adminKeyInvalid
    }

    /// The stored key `text` is, unless it is malformed, unknown, revoked or has a wrong secret.
    func key(_ text: String) async throws -> StoredAdminKey? {
        guard let presented = AdminKeySecret(text), let stored = try await store.adminKey(id: presented.id),
            stored.revokedAt == nil, presented.matches(stored)
        else { return nil }
        return stored
    }

    /// Counts a refused key against the client's address and logs it.
    /// - Throws: `429` once the address has guessed too often.
    func refuse(_ request: Request, _ context: Context) async throws {
        try await limits.enforce(limits.rules.adminPerAddress, key: limits.client(request, context))
        // The address too: who tries keys is an operator's business (the limit's own refusal log
        // never names one, as it counts strangers' sign-ins).
        logger.notice(
            "latchkey.admin.key_refused",
            metadata: [
                "latchkey.http.route": "\(context.endpointPath ?? "")",
                "latchkey.client.address": "\(limits.clientInfo(request, context).address ?? "unknown")",
            ])
    }

    /// Writes `admin.call`. A failure to write is logged, not answered: the call itself already
    /// happened (or failed) by then.
    private func record(_ request: Request, route: String, userID: String, key: StoredAdminKey, status: Int) async {
        let event = AuditEvent(
            type: .adminCall, userID: userID,
            detail: [
                "method": .string(request.method.rawValue), "route": .string(route), "status": .int(status),
                "name": .string(key.name),
            ])
        do {
            try await store.recordAdminCall(event, keyID: key.id, now: clock())
        } catch {
            logger.error(
                "latchkey.admin.audit_failed",
                metadata: [
                    "latchkey.admin.key": "\(key.id)", "latchkey.error": "\(String(reflecting: type(of: error)))",
                ])
        }
    }
}

extension APIError {
    /// No admin key, or one that is unknown, malformed or revoked.
    static let adminKeyInvalid = APIError(
        .unauthorized, .adminKeyInvalid, "A valid admin key is required (latchkey admin keys create).")
}
