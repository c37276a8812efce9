import ServiceLifecycle

/// A resource the server uses (the database pool, the Facebook HTTP client) as a member of the
/// service group: it waits for the group's graceful shutdown and then closes the resource.
///
/// A `ServiceGroup` shuts its services down one at a time in reverse order, so listing these
/// before the server means the server has finished its requests in flight before the client or
/// the database they use goes away. Cancelled instead (a service failed to start), it closes at
/// once.
struct ClosingService: Service, CustomStringConvertible {
    /// What it closes, for the group's log.
    let description: String
    let close: @Sendable () async -> Void

    func run() async {
        // Throws only when cancelled; either way the resource is closed.
        try? await gracefulShutdown()
        await close()
    }
}
