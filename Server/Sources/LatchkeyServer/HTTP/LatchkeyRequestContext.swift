import Hummingbird
import Logging
import NIOCore

/// The server's request context: Hummingbird's core context plus the peer address, which the
/// abuse limits count by (`ClientAddress`), and the session a bearer token proved
/// (`BearerAuthentication`).
struct LatchkeyRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The TCP peer: a client, or a trusted proxy in front of it.
    let remoteAddress: SocketAddress?
    /// The access token's claims, once `BearerAuthentication` checked them; `nil` on routes
    /// without it.
    var session: SessionTokens.AccessClaims?
    /// The admin key `AdminAuthentication` checked; `nil` on routes without it.
    var adminKey: StoredAdminKey?
    /// The console session `ConsoleAuthentication` checked; `nil` outside the console.
    var consoleSession: ConsoleSession?

    /// The authenticated session: routes behind `BearerAuthentication` always have one, so its
    /// absence is our wiring's fault, answered as a missing token rather than a crash.
    func authenticatedSession() throws -> SessionTokens.AccessClaims {
        guard let session else { throw APIError.unauthorized }
        return session
    }

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
