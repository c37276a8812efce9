import Hummingbird
import LatchkeyAPI
import LatchkeyShared

/// Guests, the caller's identities (link, complete a conflict, unlink) and deleting the account.
struct IdentitiesController: Controller {
    let identities: IdentityService
    let apple: AppleSignInService
    let limits: AbuseLimits
    let reading: RequestReading
    /// Checks the token and that its session is active.
    let sessionChecked: BearerAuthentication

    /// The fields `POST /v1/users/me/identities` accepts: `provider` and that provider's sign-in fields.
    static let linkFields = SignInService.requestFields.union(AppleSignInService.requestFields).union(["provider"])

    /// The longest provider name or subject accepted in a path: far above any provider's ids.
    static let maximumPathComponent = 256

    func register(on router: Router<LatchkeyRequestContext>) {
        router.route(.post, "/v1/auth/anonymous") { request, context in
            // Counted per address like a sign-in: each call makes an account.
            _ = try await limits.enforceSignIn(request, context)
            _ = try await reading.fields(request, allowed: [])
            return try Response.json(
                try await identities.createGuest(client: limits.clientInfo(request, context), logger: context.logger))
        }
        let signedIn = router.group().add(middleware: sessionChecked)
        signedIn.route(.post, "/v1/users/me/identities") { request, context in
            let claims = try context.authenticatedSession()
            let address = try await limits.enforceSignIn(request, context)
            let fields = try await reading.fields(request, allowed: Self.linkFields)
            var credential = fields
            let provider = try RequestReading.string(fields, "provider", maxLength: 32) ?? "facebook"
            credential["provider"] = nil
            let user: StoredUser
            switch provider {
            case "facebook":
                guard credential.keys.allSatisfy(SignInService.requestFields.contains) else {
                    throw APIError.invalidRequest("A Facebook link takes accessToken or idToken (with nonce).")
                }
                let request = try SignInService.request(credential)
                user = try await identities.link(claims) { try await identities.facebook(request, client: address) }
            case "apple":
                try apple.requireEnabled()
                guard credential.keys.allSatisfy(AppleSignInService.requestFields.contains) else {
                    throw APIError.invalidRequest("An Apple link takes idToken, authorizationCode and nonce.")
                }
                let request = try AppleSignInService.request(credential)
                user = try await identities.link(claims) { try await apple.prove(request) }
            default:
                throw APIError.invalidRequest("provider must be facebook or apple.")
            }
            return try Response.json(UserAnswerBody(user: UserBody(user)))
        }
        signedIn.route(.post, "/v1/users/me/identities/link-requests") { request, context in
            let claims = try context.authenticatedSession()
            let fields = try await reading.fields(request, allowed: ["codeChallenge"])
            guard let challenge = fields["codeChallenge"]?.stringValue else {
                throw APIError.invalidRequest(
                    "Send {\"codeChallenge\"}: the S256 code_challenge of the Easy Login request.")
            }
            return try Response.json(try identities.linkRequest(claims, codeChallenge: challenge))
        }
        signedIn.route(.post, "/v1/users/me/identities/complete") { request, context in
            let claims = try context.authenticatedSession()
            let fields = try await reading.fields(request, allowed: IdentityService.completionFields)
            guard let ticket = fields[LinkCompletionRequest.CodingKeys.linkTicket.stringValue]?.stringValue,
                !ticket.isEmpty, ticket.utf8.count <= SealedToken.maximumLength
            else { throw APIError.invalidRequest("Send {\"linkTicket\": \"…\"}.") }
            return try Response.json(try await identities.complete(claims, LinkCompletionRequest(linkTicket: ticket)))
        }
        signedIn.route(.delete, "/v1/users/me/identities/{provider}/{subject}") { _, context in
            let claims = try context.authenticatedSession()
            guard let provider = context.parameters.get("provider"), let subject = context.parameters.get("subject"),
                provider.utf8.count <= Self.maximumPathComponent, subject.utf8.count <= Self.maximumPathComponent
            else { throw APIError.invalidRequest("Name the identity as /{provider}/{subject}.") }
            let user = try await identities.unlink(claims, provider: provider, subject: subject)
            return try Response.json(UserAnswerBody(user: UserBody(user)))
        }
        signedIn.route(.delete, "/v1/users/me") { _, context in
            try await identities.deleteAccount(try context.authenticatedSession(), logger: context.logger)
            return Response(status: .noContent)
        }
    }
}
