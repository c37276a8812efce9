import Hummingbird

/// Easy Login's two browser steps: the app's authorization request, and Facebook's return.
/// (Its code is redeemed at the token endpoint, `SessionsController`.)
struct EasyLoginController: Controller {
    let easyLogin: EasyLoginService
    let limits: AbuseLimits
    let reading: RequestReading

    /// The code page's fields.
    static let factorFields: Set<String> = ["challenge", "code", "recovery_code"]

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.get, "/v1/oauth/authorize") { request, context in
            await easyLogin.authorize(
                request.uri.query, address: limits.client(request, context), logger: context.logger)
        }
        router.route(.get, ServerConfiguration.facebookCallbackPath) { request, context in
            await easyLogin.callback(
                request.uri.query, address: limits.client(request, context), logger: context.logger)
        }
        router.route(.post, FactorCodePage.path) { request, context in
            // A browser's form: a body that is not one still gets a page, never JSON.
            guard let fields = try? await reading.fields(request, allowed: Self.factorFields) else {
                return EasyLoginResponse.page(title: "Sign-in failed", message: "Start again from the app.")
            }
            return await easyLogin.completeFactor(
                fields, client: limits.clientInfo(request, context), address: limits.client(request, context))
        }
    }
}
