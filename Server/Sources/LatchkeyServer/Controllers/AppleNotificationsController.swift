import Hummingbird
import LatchkeyAPI

/// `POST /v1/apple/notifications`: the URL registered on Apple's developer site for the app's
/// server-to-server notifications.
struct AppleNotificationsController: Controller {
    let apple: AppleSignInService
    let notifications: AppleNotificationService
    let limits: AbuseLimits
    let reading: RequestReading

    /// The longest payload accepted: Apple's JWS is about a kilobyte.
    static let maximumPayload = 16 * 1024

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.post, "/v1/apple/notifications") { request, context in
            try apple.requireEnabled()
            // Anyone can post here; only the signature makes it Apple. Counted like the callbacks, per
            // address and per network (each refusal is an audit row).
            _ = try await limits.enforceCallback(request, context)
            let fields = try await reading.fields(request, allowed: ["payload"])
            guard let payload = try RequestReading.string(fields, "payload", maxLength: Self.maximumPayload),
                !payload.isEmpty
            else { throw APIError.invalidRequest("Send {\"payload\": \"<JWS>\"} as Apple does.") }
            _ = try await notifications.receive(payload)
            return Response(status: .ok)
        }
    }
}
