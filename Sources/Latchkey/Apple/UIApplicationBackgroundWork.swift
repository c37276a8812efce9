// BackgroundWork through UIKit's background tasks: what to hold and when is decided in LatchkeyCore
// (a refresh, from its request to its save); this file only asks UIKit. Compiled on iOS, tvOS and
// visionOS, and on Linux only against the UIKit stand-in (target LatchkeyAppleAdapterCheck).
#if canImport(UIKit) && (os(iOS) || os(tvOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import LatchkeyCore
import UIKit

/// ``BackgroundWork`` through `UIApplication.beginBackgroundTask`: a refresh started just before
/// the app leaves the screen gets the time to save its answer before iOS suspends the app.
///
/// Pass it in the app's configuration (`backgroundWork: UIApplicationBackgroundWork()`). App
/// extensions cannot use `UIApplication`, and need not: when an answer is lost there, the server
/// hands the spent token the same successor again (its fail-to-save rule).
@available(iOSApplicationExtension, unavailable)
@available(tvOSApplicationExtension, unavailable)
@available(visionOSApplicationExtension, unavailable)
public struct UIApplicationBackgroundWork: BackgroundWork {
    /// Background work through `UIApplication.shared`.
    public init() {}

    /// Runs `work` inside a background task, ended when `work` returns or throws, or when the
    /// system's time runs out (whichever comes first).
    public func run<T: Sendable>(
        named name: String, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let task = await BackgroundTask.begin(named: name)
        do {
            let value = try await work()
            await task.end()
            return value
        } catch {
            await task.end()
            throw error
        }
    }
}

/// One background task, ended once: by the work finishing or by the system's expiration handler.
@available(iOSApplicationExtension, unavailable)
@available(tvOSApplicationExtension, unavailable)
@available(visionOSApplicationExtension, unavailable)
@MainActor
private final class BackgroundTask {
    private var identifier = UIBackgroundTaskIdentifier.invalid

    static func begin(named name: String) -> BackgroundTask {
        let task = BackgroundTask()
        // UIKit ends the app if an expired task is not ended in its handler.
        task.identifier = UIApplication.shared.beginBackgroundTask(withName: name) { task.end() }
        return task
    }

    func end() {
        guard identifier != .invalid else { return }
        UIApplication.shared.endBackgroundTask(identifier)
        identifier = .invalid
    }
}
#endif
