import Foundation
import Latchkey

extension LatchkeyConfiguration {
    /// The server the sample signs in with: the one `latchkey serve --dev` runs on this Mac in a
    /// Debug build (its demo app, client and redirect), yours in a Release build.
    static var sample: LatchkeyConfiguration {
        #if DEBUG
        LatchkeyConfiguration(
            serverURL: URL(string: "http://127.0.0.1:8080")!, facebookAppID: "100000000000001",
            oauthClientID: "latchkey-demo", redirectURI: "latchkeydemo://auth")
        #else
        LatchkeyConfiguration(
            serverURL: URL(string: "https://auth.example.com")!, facebookAppID: "1234567890",
            oauthClientID: "my-ios-app", redirectURI: "myapp://auth")
        #endif
    }
}
