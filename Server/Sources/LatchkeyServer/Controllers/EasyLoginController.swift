import Hummingbird

/// Easy Login's two browser steps: the app's authorization request, and Facebook's return.
/// (Its code is redeemed at the token endpoint, `SessionsController`.)
struct EasyLoginController: Controller {
    let easyLogin: EasyLoginService
    let limits: AbuseLimits

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.get, "/v1/oauth/authorize") { request, context in
            await easyLogin.authorize(
                request.uri.query, address: limits.client(request, context), logger: context.logger)
        }
        router.route(.get, ServerConfiguration.facebookCallbackPath) { request, context in
            await easyLogin.callback(
                request.uri.query, address: limits.client(request, context), logger: context.logger)
        }
    }
}
