import Hummingbird
import LatchkeyAPI

/// Signing in with a Facebook or an Apple credential, and the server nonces Limited Login may require.
struct SignInController: Controller {
    let signIn: SignInService
    let apple: AppleSignInService
    let identities: IdentityService
    let tokens: SessionTokens
    let limits: AbuseLimits
    let reading: RequestReading

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.post, "/v1/auth/facebook") { request, context in
            let address = try await limits.enforceSignIn(request, context)
            let client = limits.clientInfo(request, context)
            let guest = try guestClaims(request)
            let fields = try await reading.fields(request, allowed: SignInService.requestFields)
            let credential = try SignInService.request(fields)
            if let guest {
                return try Response.json(
                    try await identities.upgradeGuest(guest, client: client, logger: context.logger) {
                        try await identities.facebook(credential, client: address)
                    })
            }
            return try Response.json(
                try await signIn.signIn(credential, client: address, info: client, logger: context.logger))
        }
        router.route(.post, "/v1/auth/apple") { request, context in
            try apple.requireEnabled()
            _ = try await limits.enforceSignIn(request, context)
            let client = limits.clientInfo(request, context)
            let guest = try guestClaims(request)
            let fields = try await reading.fields(request, allowed: AppleSignInService.requestFields)
            let credential = try AppleSignInService.request(fields)
            if let guest {
                return try Response.json(
                    try await identities.upgradeGuest(guest, client: client, logger: context.logger) {
                        try await apple.prove(credential)
                    })
            }
            return try Response.json(try await apple.signIn(credential, client: client, logger: context.logger))
        }
        router.route(.post, "/v1/auth/nonce") { request, context in
            try await limits.enforce(limits.rules.noncePerAddress, key: limits.client(request, context))
            // No fields, but the body is still read: anything other than nothing or `{}` is refused.
            _ = try await reading.fields(request, allowed: [])
            return try Response.json(try await signIn.issueNonce())
        }
    }

    /// A guest's claims when the sign-in carries a guest's bearer: the sign-in then upgrades the
    /// guest (the identity is linked to it). Anyone else's bearer is not needed to sign in and is
    /// ignored, as is another scheme (a proxy's Basic credentials). A bearer that does not verify
    /// is refused rather than ignored: signing in past it would strand a guest's account.
    private func guestClaims(_ request: Request) throws -> SessionTokens.AccessClaims? {
        guard let header = request.headers[.authorization], let token = BearerAuthentication.bearerToken(header) else {
            return nil
        }
        let claims = try tokens.verify(token, now: signIn.configuration.clock())
        return claims.anonymous ? claims : nil
    }
}
