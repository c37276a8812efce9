// Compile-only stand-in for the few UIKit declarations the Apple adapter uses (background tasks,
// protected data), with Apple's signatures, so the adapter is compiled on Linux
// (target LatchkeyAppleAdapterCheck). Nothing here runs.
import Foundation

/// Apple: `struct UIBackgroundTaskIdentifier`.
public struct UIBackgroundTaskIdentifier: Hashable, Sendable {
    let rawValue: Int
    /// Apple: `static let invalid: UIBackgroundTaskIdentifier`.
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

/// Apple: `@MainActor class UIApplication`.
@MainActor
public final class UIApplication {
    /// Apple: `class var shared: UIApplication { get }` (unavailable in app extensions).
    public static let shared = UIApplication()
    /// Apple: `func beginBackgroundTask(withName:expirationHandler:) -> UIBackgroundTaskIdentifier`.
    public func beginBackgroundTask(
        withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil
    ) -> UIBackgroundTaskIdentifier { .invalid }
    /// Apple: `func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier)`.
    public func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {}
    /// Apple: `class let protectedDataDidBecomeAvailableNotification: NSNotification.Name`.
    nonisolated public static let protectedDataDidBecomeAvailableNotification = Notification.Name(
        "UIApplicationProtectedDataDidBecomeAvailable")
}

extension NotificationCenter {
    /// Apple (Foundation, not in swift-corelibs-foundation): `func notifications(named:object:) -> Notifications`.
    public func notifications(named name: Notification.Name, object: AnyObject? = nil) -> AsyncStream<Notification> {
        AsyncStream { $0.finish() }
    }
}

/// Apple: `struct UIAccessibility`.
public enum UIAccessibility {
    /// Apple: `struct Notification`.
    public struct Notification: Sendable {
        let rawValue: UInt32
        /// Apple: `static let announcement: UIAccessibility.Notification`.
        public static let announcement = Notification(rawValue: 1008)
    }
    /// Apple: `static func post(notification: UIAccessibility.Notification, argument: Any?)`.
    @MainActor public static func post(notification: Notification, argument: Any?) {}
}
