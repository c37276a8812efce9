/// Asks the system to keep the app running while a piece of work finishes.
///
/// iOS suspends an app moments after it leaves the screen. A refresh caught there has had its
/// token rotated by the server but has not saved the answer, and the next launch would present
/// the spent token. The client runs each refresh, from the request to the save, through this.
/// `import Latchkey` provides ``LatchkeyConfiguration/backgroundWork``'s default on iOS, tvOS and
/// visionOS (`UIApplication.beginBackgroundTask`); elsewhere there is nothing to ask.
public protocol BackgroundWork: Sendable {
    /// Runs `work`, holding the system's permission to keep running until it returns. When the
    /// system withdraws it early, `work` keeps running as long as the process does; the server's
    /// fail-to-save rule covers an answer lost that way.
    func run<T: Sendable>(named name: String, _ work: @escaping @Sendable () async throws -> T) async throws -> T
}
