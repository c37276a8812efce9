import Hummingbird
import LatchkeyAPI

/// Signing in with a Facebook credential, and the server nonces Limited Login may require.
struct SignInController: Controller {
    let signIn: SignInService
    let identities: IdentityService
    let tokens: SessionTokens
    let limits: AbuseLimits
    let reading: RequestReading

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.post, "/v1/auth/facebook") { request, context in
            let address = try await limits.enforceSignIn(request, context)
            // A bearer is optional here. A guest's upgrades the guest (the identity is linked to
            // it); anyone else's is not needed to sign in and is ignored, as is another scheme (a
            // proxy's Basic credentials). A bearer that does not verify is refused rather than
            // ignored: signing in past it would strand a guest's account.
            var guest: SessionTokens.AccessClaims?
            if let header = request.headers[.authorization], let token = BearerAuthentication.bearerToken(header) {
                let claims = try tokens.verify(token, now: signIn.configuration.clock())
                if claims.anonymous { guest = claims }
            }
            let fields = try await reading.fields(request, allowed: SignInService.requestFields)
            let credential = try SignInService.request(fields)
            if let guest {
                return try Response.json(
                    try await identities.upgradeGuest(guest, credential, client: address, logger: context.logger))
            }
            return try Response.json(try await signIn.signIn(credential, client: address, logger: context.logger))
        }
        router.route(.post, "/v1/auth/nonce") { request, context in
            try await limits.enforce(limits.rules.noncePerAddress, key: limits.client(request, context))
            // No fields, but the body is still read: anything other than nothing or `{}` is refused.
            _ = try await reading.fields(request, allowed: [])
            return try Response.json(try await signIn.issueNonce())
        }
    }
}
