import Foundation
import LatchkeyAPI

/// Where the events a store records come from: the node, and the client of the request being
/// served (none for background work and the command line). Every audit row carries it.
///
/// A task-local, set once per request (`AuditContextMiddleware`) and per background run, rather
/// than a parameter of every store method that records an event: a dozen operations record
/// events, several deep inside their transactions, and each would otherwise have to be handed a
/// client it has no other use for. The stores read it where they write the row.
package struct AuditContext: Sendable, Equatable {
    /// The node that served it (`LATCHKEY_NODE_NAME`); `nil` outside a server.
    package var node: String?
    /// Works the client out when an event is recorded: most requests record none (`GET
    /// /v1/users/me`, a refresh), and reading the address and user agent for each was measurable.
    private let resolveClient: @Sendable () -> ClientInfo

    /// The request's client.
    package var client: ClientInfo { resolveClient() }
    /// The admin key of the call being served (the admin API and console), named in the detail
    /// of every event the call records (`detail(of:)`).
    package var adminKeyID: String?

    /// Creates a context.
    package init(node: String?, client: ClientInfo) {
        self.node = node
        resolveClient = { client }
    }

    /// A context whose client `resolve` works out, only if an event asks.
    package init(node: String?, resolving resolve: @escaping @Sendable () -> ClientInfo) {
        self.node = node
        resolveClient = resolve
    }

    /// The same node, client and admin key.
    package static func == (left: AuditContext, right: AuditContext) -> Bool {
        left.node == right.node && left.client == right.client && left.adminKeyID == right.adminKeyID
    }

    /// `event`'s detail as stored: with `admin_key` when an admin call records it, so every change
    /// an operator makes names the key that made it, whichever store operation wrote it.
    package func detail(of event: AuditEvent) -> JSONValue {
        guard let adminKeyID, var members = event.detail.objectValue else { return event.detail }
        members["admin_key"] = .string(adminKeyID)
        return .object(members)
    }

    /// The context of the running task: no node and no client unless one was set.
    @TaskLocal package static var current = AuditContext(node: nil, client: .unknown)
}
