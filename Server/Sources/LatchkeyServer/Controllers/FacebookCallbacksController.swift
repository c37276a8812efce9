import Foundation
import Hummingbird
import LatchkeyAPI

/// Facebook's callbacks, the URLs registered in the app's dashboard (Facebook Login → Settings):
/// `POST /v1/facebook/deauthorize` and `POST /v1/facebook/data-deletion`, and the data-deletion
/// request's public status page.
struct FacebookCallbacksController: Controller {
    let callbacks: FacebookCallbackService
    let store: any LatchkeyStore
    let limits: AbuseLimits
    let reading: RequestReading

    /// The longest `signed_request` read (`SignedRequest.maximumLength`).
    static let maximumSignedRequest = 8 * 1024

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.post, ServerConfiguration.facebookDeauthorizePath) { request, context in
            try await callbacks.deauthorize(try await signedRequest(request, context))
            return try Response.json(JSONValue.object([:]))
        }
        router.route(.post, ServerConfiguration.facebookDataDeletionPath) { request, context in
            try Response.json(try await callbacks.requestDeletion(try await signedRequest(request, context)))
        }
        router.route(.get, ServerConfiguration.facebookDataDeletionPath + "/{code}") { request, context in
            // Counted like a callback: codes are unguessable, and guessing is made slow too.
            _ = try await limits.enforceCallback(request, context, rule: \.callbackPerAddress)
            guard let code = context.parameters.get("code"), code.utf8.count <= 64,
                let found = try await store.deletionRequest(code: code)
            else { return DeletionStatusPage.notFound() }
            return DeletionStatusPage.response(found)
        }
    }

    /// The form's `signed_request`, once the caller is counted (anyone can post here; only the
    /// signature makes it Facebook, and each refusal is an audit row).
    private func signedRequest(_ request: Request, _ context: LatchkeyRequestContext) async throws -> String {
        _ = try await limits.enforceCallback(request, context)
        let fields = try await reading.fields(request, allowed: [FacebookCallbackService.field])
        guard
            let value = try RequestReading.string(
                fields, FacebookCallbackService.field, maxLength: Self.maximumSignedRequest), !value.isEmpty
        else { throw APIError.invalidRequest("Send signed_request as Facebook does (a form field).") }
        return value
    }
}
