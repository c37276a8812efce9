import AuthenticationServices
import Foundation
import Latchkey
import SwiftUI

/// Who is signed in, and the button that signs in with Easy Login (the system's web sheet) or out.
struct SampleView: View {
    @Environment(LatchkeySessionModel.self) private var session
    @Environment(\.webAuthenticationSession) private var webAuthenticationSession
    @State private var alert: String?

    var body: some View {
        VStack(spacing: 16) {
            if session.isSignedIn {
                LatchkeyProfilePicture(session: session).frame(width: 80, height: 80)
                Text(session.user?.string("name") ?? "")
            }
            LatchkeyLoginButton(
                session: session, signingInWith: .easyLogin(webAuthenticationSession, permissions: ["email"])
            ) { event in
                // Only this button's failures arrive here.
                if case .failed(let error) = event, error.shouldNotifyUser { alert = error.localizedDescription }
            }
        }
        .alert(alert ?? "", isPresented: Binding(get: { alert != nil }, set: { if !$0 { alert = nil } })) {
            Button("OK") { alert = nil }
        }
    }
}
