import ServiceLifecycle

/// A service that a graceful shutdown cancels, for one that does not watch for the shutdown
/// itself everywhere it waits: Apple's credential check waits a second before its first call, and
/// a shutdown in that second (a port in use, SIGTERM just after the start) then waited for that
/// call, up to `LATCHKEY_APPLE_TIMEOUT` per client id, against an Apple (or emulator) going away.
struct CancellingAtShutdown<Wrapped: Service>: Service, CustomStringConvertible {
    let wrapped: Wrapped

    /// The wrapped service's description, for the group's log.
    var description: String { "\(wrapped)" }

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await wrapped.run() }
    }
}
