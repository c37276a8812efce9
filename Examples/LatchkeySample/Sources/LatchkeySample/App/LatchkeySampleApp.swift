import Foundation
import Latchkey
import SwiftUI

/// The sample app: one client and one session model for the whole app, the stored session picked
/// up at launch, the phone's lifecycle followed, and Easy Login's redirect handled.
struct LatchkeySampleApp: App {
    @State private var session = LatchkeySessionModel(client: LatchkeyClient(configuration: .sample))

    var body: some Scene {
        WindowGroup {
            SampleView()
                .environment(session)
                .task { await session.restore() }
                .latchkeyLifecycle(session)
                // Easy Login in an outside browser comes back here, even after a relaunch.
                .onOpenURL { url in Task { await session.handleOpenURL(url) } }
        }
    }
}
