// Tells LatchkeySessionModel when the app comes to the foreground and when protected data becomes
// available; what to do then is decided (and tested on Linux) in the model. Compiled on Apple
// platforms, and on Linux only against the SwiftUI and UIKit stand-ins (target LatchkeyAppleAdapterCheck).
#if canImport(SwiftUI) && canImport(Observation) && (os(iOS) || os(macOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import Foundation
import LatchkeyCore
import SwiftUI
#if canImport(UIKit) && (os(iOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
import UIKit
#endif

extension View {
    /// Keeps `session` in step with the app's life: when a scene becomes active, an Easy Login
    /// abandoned in an outside browser stops blocking the button, an unreadable store is read
    /// again, and what an extension did to the shared session is followed
    /// (``LatchkeySessionModel/sceneBecameActive()``); on iOS, when protected data becomes
    /// available after a reboot, the stored session is read (``LatchkeySessionModel/protectedDataBecameAvailable()``).
    /// Apply it once, on the root view.
    @available(iOS 15.0, macOS 12.0, visionOS 1.0, *)
    public func latchkeyLifecycle(_ session: LatchkeySessionModel) -> some View {
        modifier(LatchkeyLifecycle(session: session))
    }
}

@available(iOS 15.0, macOS 12.0, visionOS 1.0, *)
private struct LatchkeyLifecycle: ViewModifier {
    let session: LatchkeySessionModel
    @Environment(\.scenePhase) private var scenePhase
    /// The phase last seen: the scene's first appearance is the launch, which `restore()` handles.
    @State private var seenPhase: ScenePhase?

    func body(content: Content) -> some View {
        content
            .task(id: scenePhase) {
                // Recorded before the await: a phase change meanwhile cancels this task and starts
                // another, which must see this phase, not the one before.
                let previous = seenPhase
                seenPhase = scenePhase
                guard previous != nil, previous != .active, scenePhase == .active else { return }
                await session.sceneBecameActive()
            }
            .task {
                #if canImport(UIKit) && (os(iOS) || os(visionOS) || LATCHKEY_APPLE_STAND_INS)
                let available = NotificationCenter.default.notifications(
                    named: UIApplication.protectedDataDidBecomeAvailableNotification)
                for await _ in available { await session.protectedDataBecameAvailable() }
                #endif
            }
    }
}
#endif
