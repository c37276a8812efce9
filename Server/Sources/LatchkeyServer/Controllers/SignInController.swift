import Hummingbird
import LatchkeyAPI

/// Signing in with a Facebook credential, and the server nonces Limited Login may require.
struct SignInController: Controller {
    let signIn: SignInService
    let limits: AbuseLimits
    let reading: RequestReading

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.post, "/v1/auth/facebook") { request, context in
            let address = try await limits.enforceSignIn(request, context)
            let fields = try await reading.fields(request, allowed: SignInService.requestFields)
            let body = try await signIn.signIn(SignInService.request(fields), client: address, logger: context.logger)
            return try Response.json(body)
        }
        router.route(.post, "/v1/auth/nonce") { request, context in
            try await limits.enforce(limits.rules.noncePerAddress, key: limits.client(request, context))
            // No fields, but the body is still read: anything other than nothing or `{}` is refused.
            _ = try await reading.fields(request, allowed: [])
            return try Response.json(try await signIn.issueNonce())
        }
    }
}
